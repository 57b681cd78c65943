package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The corpus: a year of a user's daily notes (one file a day, about 45
// short entries each, as an assistant writes them) and a MEMORY.md, with
// 150 questions whose answer is one line. Everything follows from the seed.
//
// Question kinds, 50 each, in the style of LongMemEval and LoCoMo:
//   - keyword: the question shares rare words (a made-up name) with the
//     answer line.
//   - paraphrase: the question says the same thing in other words; it
//     shares no content word with the answer line (checked when generated).
//     The pairs were written by hand as a person would phrase them, not
//     derived from any thesaurus the search uses.
//   - update: a fact stated two or three times over the year with a new
//     value each time, mentioned in passing in between and after; the
//     answer is the newest statement.

// question is one eval item; Gold is the answer's file and line.
type question struct {
	Kind   string
	Q      string
	Path   string // e.g. memory/2025-03-04.md
	Line   int
	Older  []loc    // update questions: the replaced statements
	Values []string // update questions: the values stated, oldest first (the last is the answer)
	Owner  string   // ledger update questions: whose fact, when the topic has several owners
}

type loc struct {
	Path string
	Line int
}

// entry is one note entry before it is placed in a file.
type entry struct {
	text  string
	qi    int  // index into questions, or -1
	gold  bool // the answer line of questions[qi]
	older bool // a replaced statement of questions[qi]
}

const year = 2025

func dayName(d int) string {
	return "memory/" + time.Date(year, 1, 1+d, 0, 0, 0, 0, time.Local).Format("2006-01-02") + ".md"
}

// corpus generates the notes under dir/memory and returns the questions.
func corpus(dir string, seed uint64, perDay int) ([]question, int64, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	days := 365
	byDay := make([][]entry, days)
	var qs []question
	place := func(d int, e entry) { byDay[d] = append(byDay[d], e) }

	// Keyword facts: a made-up name makes the words rare.
	for i := 0; i < 50; i++ {
		k := keywordFacts[i%len(keywordFacts)]
		name := pseudoWord(rng)
		qs = append(qs, question{Kind: "keyword", Q: fmt.Sprintf(k.q, name)})
		place(rng.IntN(days), entry{text: fmt.Sprintf(k.note, name, 100+rng.IntN(9900)), qi: len(qs) - 1, gold: true})
	}
	// Paraphrases.
	for i := 0; i < 50; i++ {
		p := paraphrases[i%len(paraphrases)]
		qs = append(qs, question{Kind: "paraphrase", Q: p.q})
		place(rng.IntN(days), entry{text: p.note, qi: len(qs) - 1, gold: true})
	}
	// Knowledge updates: 2 or 3 statements in date order, mentions around
	// and after them (a mention is often the most recent line on a topic).
	owners := []string{"my", "Ana's", "Tom's"}
	for i := 0; i < 50; i++ {
		t := updateTopics[i%len(updateTopics)]
		owner := owners[(i/len(updateTopics))%len(owners)]
		qs = append(qs, question{Kind: "update", Q: strings.ReplaceAll(t.q, "{o}", owner)})
		qi := len(qs) - 1
		n := 2 + rng.IntN(2)
		vals := pickN(rng, t.values, n)
		qs[qi].Values = vals
		dates := pickSorted(rng, days-40, n) // the last statement leaves room for later mentions
		for j := 0; j < n; j++ {
			form := t.states[rng.IntN(len(t.states))]
			if j > 0 && len(t.changes) > 0 && rng.IntN(2) == 0 {
				form = t.changes[rng.IntN(len(t.changes))]
			}
			text := upperFirst(strings.NewReplacer("{o}", owner, "{v}", vals[j]).Replace(form))
			place(dates[j], entry{text: text, qi: qi, gold: j == n-1, older: j < n-1})
		}
		for j := 0; j < 3+rng.IntN(3); j++ {
			form := t.mentions[rng.IntN(len(t.mentions))]
			d := dates[0] + rng.IntN(days-dates[0])
			if j == 0 {
				d = dates[n-1] + 1 + rng.IntN(days-dates[n-1]-1) // always one after the newest statement
			}
			place(d, entry{text: upperFirst(strings.ReplaceAll(form, "{o}", owner)), qi: -1})
		}
	}

	return writeDays(dir, rng, byDay, perDay, qs, filler) // ledger.go
}

func pickN(rng *rand.Rand, from []string, n int) []string {
	idx := rng.Perm(len(from))[:n]
	out := make([]string, n)
	for i, k := range idx {
		out[i] = from[k]
	}
	return out
}

// pickSorted returns n distinct days in [0, max) in increasing order, at
// least a week apart.
func pickSorted(rng *rand.Rand, max, n int) []int {
	for {
		d := make([]int, n)
		for i := range d {
			d[i] = rng.IntN(max)
		}
		slices.Sort(d)
		ok := true
		for i := 1; i < n; i++ {
			if d[i]-d[i-1] < 7 {
				ok = false
			}
		}
		if ok {
			return d
		}
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// pseudoWord makes a pronounceable name that is no English word.
func pseudoWord(rng *rand.Rand) string {
	on := []string{"br", "k", "v", "th", "gr", "m", "z", "qu", "st", "pl", "d", "f"}
	nu := []string{"a", "o", "e", "i", "u", "ei", "ou"}
	co := []string{"rn", "lm", "x", "nd", "sk", "rv", "lt", "mb"}
	w := on[rng.IntN(len(on))] + nu[rng.IntN(len(nu))] + co[rng.IntN(len(co))] + nu[rng.IntN(len(nu))] + on[rng.IntN(len(on))]
	return strings.ToUpper(w[:1]) + w[1:]
}

// filler is an everyday entry. Its words overlap with the questions' on
// purpose (sofa, doctor, car, dentist, apartment, ...): that is what makes
// a personal memory hard to search.
func filler(rng *rand.Rand) string {
	var parts []string
	for n := 1 + rng.IntN(3); n > 0; n-- {
		r := strings.NewReplacer(
			"{p}", pick(rng, people), "{t}", pick(rng, things), "{a}", pick(rng, activities),
			"{f}", pick(rng, foods), "{w}", pick(rng, weather), "{n}", fmt.Sprint(1+rng.IntN(12)),
			"{pl}", pick(rng, places), "{wk}", pick(rng, workItems))
		parts = append(parts, upperFirst(r.Replace(pick(rng, fillerForms))))
	}
	return strings.Join(parts, " ")
}

func pick(rng *rand.Rand, from []string) string { return from[rng.IntN(len(from))] }

var (
	people     = []string{"Sam", "Lena", "Marco", "Priya", "Jonas", "Ana", "Tom", "Mei", "Omar", "Grace", "Felix", "Nora", "the neighbour", "Mom", "Dad"}
	things     = []string{"the sofa", "the car", "the laptop", "the bike", "the printer", "the fridge", "the phone", "the heating", "the washing machine", "the garden", "the kitchen tap", "the router", "the apartment", "the balcony", "the lamp"}
	activities = []string{"a run", "yoga", "a swim", "a long walk", "cycling", "the gym", "tennis", "climbing", "a hike", "football"}
	foods      = []string{"pasta", "curry", "soup", "tacos", "a salad", "ramen", "pizza", "dumplings", "risotto", "pancakes", "stew", "sushi"}
	weather    = []string{"rainy", "sunny", "cold", "windy", "grey", "warm", "foggy", "humid"}
	places     = []string{"the office", "the market", "the library", "the park", "the station", "the café", "the pharmacy", "the bakery", "the post office", "the cinema"}
	workItems  = []string{"the quarterly report", "the budget review", "the client demo", "the migration plan", "the hiring round", "the release notes", "the design doc", "the roadmap", "the onboarding guide", "the incident review"}
)

var fillerForms = []string{
	"Had {f} for dinner with {p}.",
	"Weather was {w} today; went for {a} anyway.",
	"Worked on {wk} most of the morning.",
	"Meeting about {wk} ran {n} minutes over.",
	"{p} called about the weekend plans.",
	"Need to fix {t} this week.",
	"Cleaned {t} and tidied up.",
	"Picked up groceries at {pl}: {f} ingredients, coffee, fruit.",
	"Spent the evening reading on the sofa.",
	"Lunch at {pl} with {p}, talked about {wk}.",
	"Slept badly, {n} hours at most.",
	"{p} recommended a podcast about history.",
	"Paid the bill for {t}.",
	"Went to {pl} after work.",
	"Quick call with {p} about {wk}.",
	"Tried a new recipe: {f}. Turned out fine.",
	"Took {t} in for a check.",
	"{a} in the morning, felt great.",
	"Reminder to self: water the plants.",
	"Watched a film with {p} in the evening.",
	"Doctor's waiting room was packed when I dropped off {p}'s forms.",
	"The car needed fuel again; prices went up.",
	"Sat on the balcony for an hour, {w} afternoon.",
	"{p} is thinking about moving to a bigger apartment.",
	"Dentist's office sent a newsletter; ignored it.",
	"Wrote down ideas for {wk}.",
	"Bought coffee beans at {pl}.",
	"Long day; {wk} is behind schedule by {n} days.",
	"Walked to {pl} because it was {w}.",
	"Called Mom; she says hi to {p}.",
}

// keywordFacts: note and question share a rare made-up name (%s).
var keywordFacts = []struct{ note, q string }{
	{"The locker code at %s climbing gym is %d.", "What is the locker code at %s climbing gym?"},
	{"Wifi password at the %s cabin: guest%d.", "What is the wifi password at the %s cabin?"},
	{"Order number for the %s desk lamp is %d.", "order number %s desk lamp"},
	{"%s bakery opens at 7 and their rye costs %d cents.", "When does %s bakery open?"},
	{"My membership number at %s library is %d.", "membership number %s library"},
	{"The plumber from %s Services charged %d for the boiler.", "How much did %s Services charge for the boiler?"},
	{"Parking spot %[2]d belongs to the %[1]s building.", "Which parking spot is at the %s building?"},
	{"Gate code for %s court: %d#.", "gate code %s court"},
	{"Table booked at %s bistro for %d guests.", "How many guests at %s bistro?"},
	{"The %s podcast episode %d is about sleep.", "Which %s podcast episode is about sleep?"},
}

// paraphrases: hand-written pairs with no content word in common.
var paraphrases = []struct{ note, q string }{
	{"Bought a new couch for the living room.", "When did I purchase a sofa?"},
	{"Dr. Alvarez is the physician Ana trusts most.", "Which doctor does my sister like?"},
	{"Finally relocated to the flat near the river.", "When did I move house?"},
	{"Started a fresh job as an attorney's assistant.", "What new work did I take up with a lawyer?"},
	{"The automobile insurance renewal costs more this year.", "How much is the car cover?"},
	{"Watched a wonderful movie about penguins.", "Which film did I enjoy about birds?"},
	{"Purchased a present for the wedding anniversary.", "Did I buy a gift for the marriage celebration?"},
	{"The physician advised cutting back on salt.", "What did the doctor recommend about sodium?"},
	{"My spouse wants to adopt a puppy.", "Does my wife want to get a dog?"},
	{"Aiming to quit smoking by spring.", "When do I plan to stop cigarettes?"},
	{"Begin evening classes in Italian next month.", "When do I start night school for a language?"},
	{"Misplaced my spectacles somewhere at work.", "Where did I lose my glasses?"},
	{"The infant slept through the whole night.", "Did the baby sleep well?"},
	{"Repaired the bicycle's chain myself.", "Did I fix the bike?"},
	{"Huge sale on footwear downtown this weekend.", "Where is the shoe discount?"},
	{"Our vacation to Portugal is booked.", "When is the holiday trip?"},
	{"Loads of laundry piled up; washer is broken.", "What happened to the washing machine?"},
	{"Feeling unwell, probably a cold coming on.", "When was I sick?"},
	{"Got a raise in salary after the review.", "Did my pay go up?"},
	{"The kids' instructor praised their drawings.", "What did the children's teacher say?"},
	{"Ordered a big carpet for the hallway.", "When did I get a rug?"},
	{"Examination results come back on Friday.", "When are the test scores due?"},
	{"Mother's birthday supper at the Greek place.", "Where is mom's dinner?"},
	{"Earned enough points for a complimentary flight.", "Can I get a free plane ticket?"},
	{"Tidy the attic before winter arrives.", "When should I clean the loft?"},
	{"Spotted a large hound chasing ducks.", "Did I see a dog running after birds?"},
	{"Our automobile made a strange noise on the motorway.", "What sound did the car make on the highway?"},
	{"Lawyer says the contract is fine to sign.", "What did the attorney advise about the agreement?"},
	{"The residence needs a new roof soon.", "Does the house need repairs on top?"},
	{"Talked to a physician about persistent headaches.", "Did I see a doctor about my migraines?"},
	{"Commenced the novel my colleague lent me.", "Which book did my coworker loan?"},
	{"The crib arrived damaged, returning it.", "What was wrong with the cot?"},
	{"Neighbours are constructing a garage.", "What are the people next door building?"},
	{"Retired the old laptop; data wiped.", "Did I get rid of the computer?"},
	{"Chose the cheaper mobile plan.", "Which cell phone tariff did I pick?"},
	{"Daughter scored a goal at soccer practice.", "Did my girl score in football training?"},
	{"Grandfather's ninetieth is in June.", "When is grandpa's birthday?"},
	{"Acquired tickets to the symphony.", "Did I buy seats for the orchestra concert?"},
	{"The heater stopped working overnight.", "When did the radiator break?"},
	{"Began jogging three mornings weekly.", "How often do I run?"},
	{"Medication for allergies makes me drowsy.", "Which medicine causes sleepiness?"},
	{"Painted the bedroom a pale azure.", "What hue did I choose for where I sleep?"},
	{"Must renew my driving licence.", "When does my driver's permit expire?"},
	{"Awful traffic jam on the bridge this morning.", "Was there congestion on the crossing?"},
	{"My boss approved the leave request.", "Did the manager allow my time off?"},
	{"Pupils at the academy performed a play.", "Did the students at the school do a drama?"},
	{"Stomach ache after the seafood dinner.", "Did I have belly pain from fish?"},
	{"Cancelled the gym subscription.", "Did I end my fitness membership?"},
	{"Fetched a parcel from the depot.", "Did I collect a package at the warehouse?"},
	{"Inherited grandmother's antique clock.", "Did I get granny's old watch?"},
}

// updateTopics: {o} is the owner ("my", "Ana's", "Tom's"), {v} the value.
type topic struct {
	q        string
	states   []string // statements of the value
	changes  []string // statements that say it changed
	mentions []string // lines about the topic that state no value
	values   []string
}

var updateTopics = []topic{
	{q: "Where does {o} family live now?", states: []string{"{o} family lives in {v}.", "{o} family's home is in {v}."}, changes: []string{"{o} family moved to {v}."},
		mentions: []string{"Reminder: send {o} family a postcard.", "Talked about where {o} family might live in ten years."}, values: []string{"Berlin", "Lisbon", "Leeds", "Porto", "Lyon", "Ghent"}},
	{q: "Who is {o} dentist now?", states: []string{"{o} dentist is Dr. {v}.", "Dr. {v} is {o} dentist."}, changes: []string{"{o} new dentist is Dr. {v}."},
		mentions: []string{"Reminder: {o} dentist check-up is due.", "Dentist appointment for {o} cleaning next week."}, values: []string{"Okafor", "Lindqvist", "Haddad", "Moreau", "Tanaka", "Pereira"}},
	{q: "Where does {o} partner work now?", states: []string{"{o} partner works at {v}.", "{o} partner is employed by {v}."}, changes: []string{"{o} partner switched jobs to {v}."},
		mentions: []string{"{o} partner had a long day at work.", "Reminder: pick up {o} partner from work on Friday."}, values: []string{"Siemens", "the city hospital", "a bakery", "Spotify", "the university", "a law firm"}},
	{q: "Which gym does {o} cousin go to now?", states: []string{"{o} cousin trains at {v}.", "{o} cousin's gym is {v}."}, changes: []string{"{o} cousin changed gyms to {v}."},
		mentions: []string{"{o} cousin skipped the gym again.", "Gym fees went up, {o} cousin says."}, values: []string{"FitBox", "Iron Temple", "CoreWorks", "PulseGym", "the YMCA", "Urban Lift"}},
	{q: "What car does {o} uncle drive now?", states: []string{"{o} uncle drives a {v}.", "{o} uncle's car is a {v}."}, changes: []string{"{o} uncle sold his car and bought a {v}."},
		mentions: []string{"{o} uncle's car is in the garage again.", "Reminder: {o} uncle needs a lift, his car is being serviced."}, values: []string{"Volvo", "Toyota", "Skoda", "Fiat", "Tesla", "Renault"}},
	{q: "Who is {o} manager now?", states: []string{"{o} manager is {v}.", "{v} is {o} manager."}, changes: []string{"{o} new manager is {v}."},
		mentions: []string{"One-on-one with {o} manager moved to Thursday.", "{o} manager is on holiday this week."}, values: []string{"Helga", "Raj", "Bianca", "Kofi", "Sven", "Yuki"}},
	{q: "What is {o} neighbour's phone number now?", states: []string{"{o} neighbour's phone number is {v}.", "{o} neighbour can be reached on {v}."}, changes: []string{"{o} neighbour has a new phone number: {v}."},
		mentions: []string{"Tried calling {o} neighbour, no answer.", "Reminder: ask {o} neighbour about the parcel."}, values: []string{"0151 2233", "0176 9081", "0160 4455", "0172 6620", "0157 3391", "0170 1189"}},
	{q: "Which bank does {o} brother use now?", states: []string{"{o} brother banks with {v}.", "{o} brother's account is at {v}."}, changes: []string{"{o} brother moved his account to {v}."},
		mentions: []string{"{o} brother complained about bank fees.", "Bank holiday next Monday, {o} brother reminded me."}, values: []string{"ING", "N26", "Monzo", "HSBC", "Triodos", "Revolut"}},
	{q: "What day is {o} piano lesson now?", states: []string{"{o} piano lesson is on {v}.", "{o} piano lessons are {v} afternoons."}, changes: []string{"{o} piano lesson moved to {v}."},
		mentions: []string{"Practised scales for {o} piano lesson.", "Reminder: pay for {o} piano lessons."}, values: []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}},
	{q: "Who is {o} landlord now?", states: []string{"{o} landlord is {v}.", "{v} is {o} landlord."}, changes: []string{"The building was sold; {o} new landlord is {v}."},
		mentions: []string{"Emailed {o} landlord about the leaking tap.", "Reminder: {o} landlord inspection is coming up."}, values: []string{"Mr. Becker", "Mrs. Kowalski", "Hausbau GmbH", "Mr. Nilsen", "Ms. Duarte", "Urbania Homes"}},
	{q: "What is {o} favourite restaurant now?", states: []string{"{o} favourite restaurant is {v}.", "{v} is {o} favourite place to eat."}, changes: []string{"{o} new favourite restaurant is {v}."},
		mentions: []string{"Restaurant week starts soon, {o} favourite might join.", "Booked a table somewhere new; {o} favourite restaurant was full."}, values: []string{"Trattoria Sole", "Kimchi House", "El Faro", "The Green Fork", "Pho 88", "Casa Lola"}},
	{q: "What is {o} hairdresser's name now?", states: []string{"{o} hairdresser is {v}.", "{o} hair is cut by {v}."}, changes: []string{"{o} new hairdresser is {v}."},
		mentions: []string{"Reminder: book a haircut with {o} hairdresser.", "{o} hairdresser was sick, appointment moved."}, values: []string{"Paula", "Deniz", "Mirela", "Jonah", "Clara", "Ibrahim"}},
	{q: "Which internet provider does {o} office use now?", states: []string{"{o} office internet provider is {v}.", "{o} office gets its internet from {v}."}, changes: []string{"{o} office switched internet provider to {v}."},
		mentions: []string{"Internet at {o} office was down for an hour.", "Reminder: the internet bill for {o} office is due."}, values: []string{"Vodafone", "Telekom", "O2", "Fibernet", "1&1", "Starlink"}},
	{q: "What is {o} son's school now?", states: []string{"{o} son goes to {v}.", "{o} son attends {v}."}, changes: []string{"{o} son changed schools to {v}."},
		mentions: []string{"Parents' evening at {o} son's school next week.", "{o} son forgot his school bag."}, values: []string{"Riverside Primary", "St. Mary's", "Lindenschule", "Oakwood Academy", "Hill Park School", "Montessori West"}},
	{q: "What is {o} daughter's swimming coach called now?", states: []string{"{o} daughter's swimming coach is {v}.", "{v} coaches {o} daughter at swimming."}, changes: []string{"{o} daughter has a new swimming coach, {v}."},
		mentions: []string{"{o} daughter loved swimming practice today.", "Reminder: {o} daughter's swimming gala on Sunday."}, values: []string{"Coach Erik", "Coach Amara", "Coach Luis", "Coach Petra", "Coach Ben", "Coach Sana"}},
	{q: "Which phone does {o} aunt use now?", states: []string{"{o} aunt uses a {v}.", "{o} aunt's phone is a {v}."}, changes: []string{"{o} aunt upgraded her phone to a {v}."},
		mentions: []string{"{o} aunt's phone battery died again.", "Helped {o} aunt with her phone settings."}, values: []string{"Pixel 8", "iPhone 13", "Galaxy S23", "Fairphone 5", "Moto G", "Nokia X30"}},
	{q: "Who is {o} doctor now?", states: []string{"{o} doctor is Dr. {v}.", "Dr. {v} is {o} doctor."}, changes: []string{"{o} new doctor is Dr. {v}."},
		mentions: []string{"Reminder: {o} doctor wants blood tests.", "Waited an hour at {o} doctor's surgery."}, values: []string{"Fischer", "Nguyen", "Rossi", "Adeyemi", "Kaur", "Novak"}},
}
