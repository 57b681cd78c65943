package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// The second corpus, "ledger": written independently of the first (corpus.go)
// so that rules tuned on one can be checked on the other. Nothing of the
// first is reused: other vocabulary, other people and pets, other sentence
// shapes, and other question forms ("Where do I live now?", "What's my new
// number?", "Which vet does Pepper see these days?"). Facts are written
// as an assistant and a user both write them: first person ("I live at
// 3 Birch Court."), third person ("The user's number is ..."), a list
// item under a heading line ("- Address: ..."), a table row ("| Wifi
// password | ... |"). Every statement form shares a content word with its
// question (an update question tests ordering, not paraphrase), and no
// line after the newest statement states a value of that fact.
//
// Kinds: keyword (50: a made-up name in note and question), paraphrase (25
// hand-written pairs sharing no content word), update (the newest of two
// or three statements of a fact, with mentions around and after them).

type fact struct {
	q        string   // the question; {o} the owner where the topic has one
	owners   []string // "" for a topic with one fixed owner
	states   []string // {o} owner, {v} value; "- " starts a list item, "| " a table row
	changes  []string
	mentions []string
	values   []string
}

var ledgerFacts = []fact{
	{q: "Where do I live now?", owners: []string{""},
		states:   []string{"I live at {v}.", "The user lives at {v}.", "- Where I live: {v}", "| Live at | {v} |"},
		changes:  []string{"Moved out of the old place; I now live at {v}.", "User moved house and lives at {v} from today."},
		mentions: []string{"Still unsure where to live once the lease ends.", "Asked around whether living near the canal is noisy."},
		values:   []string{"14 Harbour Lane", "3 Birch Court", "88 Quay Street", "21 Mill Road", "7 Orchard Row", "50 Canal Walk"}},
	{q: "What's my new number?", owners: []string{""},
		states:   []string{"My phone number is {v}.", "The user's number is {v}.", "- Number: {v}", "| Phone number | {v} |"},
		changes:  []string{"Got a new SIM, my number is now {v}.", "Number changed to {v} after the contract ended."},
		mentions: []string{"Number porting takes a week, the shop said.", "Forgot my number again at the pharmacy counter."},
		values:   []string{"07700 900123", "07700 900456", "07700 900789", "07700 900321", "07700 900654", "07700 900987"}},
	{q: "Which vet does {o} see these days?", owners: []string{"Pepper", "Juno", "Biscuit"},
		states:   []string{"{o}'s vet is {v}.", "{o} is registered with the vet at {v}.", "- {o}, vet: {v}", "| {o} | vet | {v} |"},
		changes:  []string{"Took {o} to a new vet, {v}, and registered there.", "{o} switched vet to {v}."},
		mentions: []string{"{o} hates the vet's waiting room.", "Vet bill for {o} arrived, paid it."},
		values:   []string{"Paws & Co", "Greenfield Vets", "Kestrel Animal Clinic", "Harbour Vets", "Dr. Oyelaran", "Dr. Amsel"}},
	{q: "What time do the kids go to bed at the moment?", owners: []string{""},
		states:   []string{"The kids go to bed at {v}.", "Kids' bedtime is {v}.", "- Bed (kids): {v}", "| Kids | bed | {v} |"},
		changes:  []string{"New rule: the kids go to bed at {v} from now on."},
		mentions: []string{"Bed routine with the kids was chaos again.", "The kids begged to stay up past bed time."},
		values:   []string{"7:30 pm", "8:00 pm", "8:15 pm", "7:45 pm", "8:30 pm", "9:00 pm"}},
	{q: "Who supplies our electricity now?", owners: []string{""},
		states:   []string{"Our electricity comes from {v}.", "Electricity supplier: {v}.", "- Electricity: {v}", "| Electricity | {v} |"},
		changes:  []string{"Switched our electricity over to {v}."},
		mentions: []string{"Electricity bill higher than expected this quarter.", "Meter reading for the electricity is due Friday."},
		values:   []string{"Octopus Energy", "EDF", "Ecotricity", "OVO", "E.ON Next", "Good Energy"}},
	{q: "Which running club is {o} in?", owners: []string{"Noor", "Ines", "Malik"},
		states:   []string{"{o} runs with {v} on Sundays, her running club.", "{o}'s running club is {v}.", "- {o}, running club: {v}", "| {o} | running club | {v} |"},
		changes:  []string{"{o} left her old running club and joined {v}."},
		mentions: []string{"{o} skipped running club this week.", "{o}'s running shoes are worn out."},
		values:   []string{"Harriers East", "Riverside Striders", "Hillside Runners", "Dockland Pacers", "Night Owls RC", "Tideway Trotters"}},
	{q: "Where does {o} work these days?", owners: []string{"Tariq", "Ines", "Oskar"},
		states:   []string{"{o} works at {v}.", "{o} is working for {v}.", "- {o}, work: {v}", "| {o} | work | {v} |"},
		changes:  []string{"{o} started work at {v} this week."},
		mentions: []string{"{o} is stressed about work.", "{o}'s work party is on Friday."},
		values:   []string{"Arup", "Royal Mail", "Deliveroo", "a dental practice", "BBC Studios", "Ocado"}},
	{q: "What's the home wifi password?", owners: []string{""},
		states:   []string{"Home wifi password is {v}.", "The wifi password at home: {v}", "- Wifi password: {v}", "| Wifi password | {v} |"},
		changes:  []string{"Changed the home wifi password to {v}."},
		mentions: []string{"Home wifi keeps dropping in the evening.", "A guest asked for the wifi password; will text it."},
		values:   []string{"otter-lamp-42", "blue-kettle-7", "maple-sofa-19", "quiet-fox-88", "river-stone-5", "copper-moon-31"}},
	{q: "Who insures our car at the moment?", owners: []string{""},
		states:   []string{"Our car is insured with {v}.", "Car insurer: {v}.", "- Car insurance: {v}", "| Car insurer | {v} |"},
		changes:  []string{"Renewed the car insurance with {v} instead."},
		mentions: []string{"Car insurance letter came, not opened yet.", "Need a quote to insure the car for the trip."},
		values:   []string{"Admiral", "Aviva", "Direct Line", "Churchill", "Hastings Direct", "Saga"}},
	{q: "Which care home is {o} in?", owners: []string{"Grandma", "Grandpa", "Aunt Rosa"},
		states:   []string{"{o} lives at the {v} care home.", "{o}'s care home is {v}.", "- {o}, care home: {v}", "| {o} | care home | {v} |"},
		changes:  []string{"{o} moved to a new care home, {v}."},
		mentions: []string{"Visited {o}; the care home garden looks lovely.", "The care home called about {o}'s glasses."},
		values:   []string{"Rosewood", "Elm House", "Meadowbank", "St. Anne's", "Oak Lodge", "Willow Court"}},
	{q: "what train do I take to work now", owners: []string{""},
		states:   []string{"I take the {v} train to work.", "User's train to work: the {v}.", "- Train to work: {v}", "| Work train | {v} |"},
		changes:  []string{"Now taking the {v} train to work, the earlier one stopped running."},
		mentions: []string{"Train to work was late again.", "Work wants everyone in on Tuesdays, so more train days."},
		values:   []string{"07:42 Ealing", "08:05 Thameslink", "07:15 Elizabeth line", "08:20 Clapham", "07:58 Overground", "08:33 Southern"}},
	{q: "What is the bike lock code?", owners: []string{""},
		states:   []string{"Bike lock code is {v}.", "The code for the bike lock: {v}", "- Bike lock: {v}", "| Bike lock code | {v} |"},
		changes:  []string{"Set a new bike lock code: {v}."},
		mentions: []string{"Bike lock is rusty, needs oil.", "Left the bike unlocked by mistake, no harm done."},
		values:   []string{"4417", "9032", "2286", "7751", "6640", "1398"}},
}

// ledgerKeywords: a made-up name (%s) and a number (%d).
var ledgerKeywords = []struct{ note, q string }{
	{"Booking reference for the %s hotel: %d.", "booking reference %s hotel"},
	{"The %s ferry leaves from pier %d.", "Which pier does the %s ferry leave from?"},
	{"User's seat at the %s theatre is row %d.", "What row is my seat at the %s theatre?"},
	{"- %s sourdough starter fed, jar %d", "%s sourdough starter"},
	{"| %s allotment | plot %d |", "Which plot is the %s allotment?"},
	{"Tracking code for the %s parcel: %d.", "tracking code %s parcel"},
	{"The %s choir rehearses in room %d.", "Where does the %s choir rehearse?"},
	{"Locker %[2]d at the %[1]s pool is mine this term.", "locker at the %s pool"},
	{"Invoice %d from %s Joinery is still unpaid.", "Has the %s Joinery invoice been paid?"},
	{"Ines recommended the %s podcast, episode %d.", "Which episode of the %s podcast did Ines recommend?"},
}

// ledgerParaphrases: hand-written, no content word shared.
var ledgerParaphrases = []struct{ note, q string }{
	{"Booked the plumber for the leaking radiator.", "Did I arrange someone to mend the heater?"},
	{"Pepper chewed through the sofa cushion.", "What did the puppy destroy?"},
	{"The boiler service is overdue.", "Is the heating check late?"},
	{"Tariq proposed to Ines at the lighthouse.", "Where did the engagement happen?"},
	{"Started learning Portuguese on the app.", "Which language am I studying?"},
	{"Sold the old bicycle on the marketplace.", "Did I get rid of my bike?"},
	{"Grandpa fell in the garden but is fine.", "Was granddad hurt outside?"},
	{"The landlady raised the rent by forty pounds.", "How much more do I pay for the flat?"},
	{"Kids caught chickenpox from nursery.", "Were the children ill?"},
	{"Ordered blackout curtains for the nursery.", "Did I buy dark drapes for the baby room?"},
	{"Our flight to Reykjavik was cancelled.", "Did the plane trip to Iceland happen?"},
	{"Noor lent me her camping stove.", "Who gave me a burner for the tent trip?"},
	{"Passed the driving theory test.", "Did I succeed in the motoring exam?"},
	{"Dishwasher leaked all over the kitchen floor.", "Was there water from the appliance?"},
	{"Malik is allergic to peanuts.", "What nut can't my friend eat?"},
	{"Cancelled the streaming subscription.", "Did I stop paying for television online?"},
	{"Planted tulip bulbs along the fence.", "What flowers did I put in the garden?"},
	{"The optician said my eyesight got worse.", "What did the glasses specialist say about my vision?"},
	{"Juno had three kittens overnight.", "Did the cat give birth?"},
	{"Signed the mortgage papers at the bank.", "Did I finalise the home loan?"},
	{"Oskar broke his wrist skateboarding.", "Which arm injury did my friend get?"},
	{"Repainted the front door dark green.", "What colour is the entrance now?"},
	{"Lost the spare house keys on the bus.", "Where did I drop the extra set for the front door?"},
	{"Aunt Rosa turns seventy next spring.", "When is my relative's big birthday?"},
	{"Quit caffeine for the whole of Lent.", "Did I give up coffee?"},
}

// ledgerFiller: everyday entries in this corpus's own words.
var ledgerFiller = []string{
	"Walked {pet} along the canal before breakfast.",
	"- Groceries: oat milk, lentils, {food}",
	"{name} dropped by with {food}.",
	"| Chore | {chore} | done |",
	"User mentioned {name} might visit next month.",
	"Fixed {chore2} after dinner.",
	"Cooked {food} for everyone; {name} loved it.",
	"Rain all afternoon, stayed in and read.",
	"{name} sent photos from the allotment.",
	"- To check: {chore} before Sunday",
	"Long call with {name} about holidays.",
	"Took {pet} to the park, it was muddy.",
	"Paid the council tax instalment.",
	"Worked from the library, quieter there.",
	"The user asked to be reminded about {chore}.",
}

var (
	ledgerNames  = []string{"Noor", "Ines", "Malik", "Tariq", "Oskar", "Grandma", "Aunt Rosa"}
	ledgerPets   = []string{"Pepper", "Juno", "Biscuit"}
	ledgerFoods  = []string{"shakshuka", "a lemon tart", "dal", "fish pie", "flatbreads", "a tray bake"}
	ledgerChores = []string{"the gutters", "the shed door", "the bathroom fan", "the hedge", "the recycling"}
)

// ledger generates the second corpus under dir/memory.
func ledger(dir string, seed uint64, perDay int) ([]question, int64, error) {
	rng := rand.New(rand.NewPCG(seed^0x1ed9e2, seed))
	days := 365
	byDay := make([][]entry, days)
	var qs []question
	place := func(d int, e entry) { byDay[d] = append(byDay[d], e) }

	for i := 0; i < 50; i++ {
		k := ledgerKeywords[i%len(ledgerKeywords)]
		name := pseudoWord(rng)
		qs = append(qs, question{Kind: "keyword", Q: fmt.Sprintf(k.q, name)})
		note := fmt.Sprintf(k.note, name, 10+rng.IntN(990))
		if strings.Contains(k.note, "%d from") { // the number first
			note = fmt.Sprintf(k.note, 1000+rng.IntN(9000), name)
		}
		place(rng.IntN(days), entry{text: note, qi: len(qs) - 1, gold: true})
	}
	for _, p := range ledgerParaphrases {
		qs = append(qs, question{Kind: "paraphrase", Q: p.q})
		place(rng.IntN(days), entry{text: p.note, qi: len(qs) - 1, gold: true})
	}
	for _, f := range ledgerFacts {
		for _, owner := range f.owners {
			qs = append(qs, question{Kind: "update", Q: strings.ReplaceAll(f.q, "{o}", owner), Owner: owner})
			qi := len(qs) - 1
			n := 2 + rng.IntN(2)
			vals := pickN(rng, f.values, n)
			qs[qi].Values = vals
			dates := pickSorted(rng, days-40, n)
			for j := 0; j < n; j++ {
				form := f.states[rng.IntN(len(f.states))]
				if j > 0 && rng.IntN(2) == 0 {
					form = f.changes[rng.IntN(len(f.changes))]
				}
				text := strings.NewReplacer("{o}", owner, "{v}", vals[j]).Replace(form)
				place(dates[j], entry{text: shaped(text), qi: qi, gold: j == n-1, older: j < n-1})
			}
			for j := 0; j < 3+rng.IntN(3); j++ {
				d := dates[0] + rng.IntN(days-dates[0])
				if j == 0 {
					d = dates[n-1] + 1 + rng.IntN(days-dates[n-1]-1)
				}
				place(d, entry{text: upperFirst(strings.ReplaceAll(f.mentions[rng.IntN(len(f.mentions))], "{o}", owner)), qi: -1})
			}
		}
	}
	return writeDays(dir, rng, byDay, perDay, qs, func(rng *rand.Rand) string {
		r := strings.NewReplacer("{pet}", pick(rng, ledgerPets), "{name}", pick(rng, ledgerNames), "{food}", pick(rng, ledgerFoods),
			"{chore}", pick(rng, ledgerChores), "{chore2}", pick(rng, ledgerChores))
		return upperFirst(r.Replace(pick(rng, ledgerFiller)))
	})
}

// shaped writes a list item under a line that introduces it and a table
// row under its header, so that they are read as a list and a table; the
// fact is the entry's last line.
func shaped(text string) string {
	switch {
	case strings.HasPrefix(text, "- "):
		return "Updated details:\n" + text
	case strings.HasPrefix(text, "| "):
		cols := strings.Count(text, "|") - 1
		return "|" + strings.Repeat(" Item |", cols-1) + " Value |\n|" + strings.Repeat("---|", cols) + "\n" + text
	}
	return text
}

// writeDays writes the daily notes (entries shuffled with filler up to
// perDay, separated by blank lines; an entry's gold line is its last) and
// a MEMORY.md, and fills in the questions' lines.
func writeDays(dir string, rng *rand.Rand, byDay [][]entry, perDay int, qs []question, filler func(*rand.Rand) string) ([]question, int64, error) {
	mem := filepath.Join(dir, "memory")
	if err := os.MkdirAll(mem, 0o700); err != nil {
		return nil, 0, err
	}
	var total int64
	for d := range byDay {
		entries := byDay[d]
		for len(entries) < perDay {
			entries = append(entries, entry{text: filler(rng), qi: -1})
		}
		rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		rel := dayName(d)
		var b strings.Builder
		b.WriteString("# " + strings.TrimSuffix(filepath.Base(rel), ".md") + "\n")
		line := 1
		for _, e := range entries {
			b.WriteString("\n" + e.text + "\n")
			line += 1 + strings.Count(e.text, "\n") + 1
			if e.qi >= 0 {
				if e.gold {
					qs[e.qi].Path, qs[e.qi].Line = rel, line
				}
				if e.older {
					qs[e.qi].Older = append(qs[e.qi].Older, loc{rel, line})
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(b.String()), 0o600); err != nil {
			return nil, 0, err
		}
		total += int64(b.Len())
	}
	var lt strings.Builder
	lt.WriteString("# Long-term memory\n")
	for i := 0; i < 40; i++ {
		lt.WriteString("\n- " + strings.TrimPrefix(filler(rng), "- ") + "\n")
	}
	if err := os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte(lt.String()), 0o600); err != nil {
		return nil, 0, err
	}
	total += int64(lt.Len())
	return qs, total, nil
}
