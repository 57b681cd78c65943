package prompt

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"jarvis/service/config"
)

// Skill is a folder under <data-dir>/skills/ holding a SKILL.md: instructions
// an agent reads and follows with its own tools (docs/protocols/agents.md toolExposure).
type Skill struct {
	ID          string // the folder's name; skillAllowlist/skillDenylist match it
	Name        string // frontmatter name, else the id
	Description string // frontmatter description
	Path        string // absolute path of SKILL.md
	CLI         string // absolute path of the skill's CLI (frontmatter cli), or ""
}

// SkillCache holds the scanned skills folder (Dir); it is rescanned at most every
// skillRescan, so a skill added or edited shows up in the next turns without
// a directory walk per turn.
type SkillCache struct {
	Dir string // <data-dir>/skills; "" lists none

	mu      sync.Mutex
	scanned time.Time
	list    []Skill
}

const skillRescan = 2 * time.Second

// all returns every skill of the folder, sorted by id.
func (c *SkillCache) all() []Skill {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Dir == "" {
		return nil
	}
	if now := time.Now(); c.scanned.IsZero() || now.Sub(c.scanned) >= skillRescan {
		c.list, c.scanned = ScanSkills(c.Dir), now
	}
	return c.list
}

// ScanSkills reads the skills under dir: each subfolder with a SKILL.md.
func ScanSkills(dir string) []Skill {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Skill
	for _, e := range entries {
		if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		p := filepath.Join(dir, e.Name(), "SKILL.md")
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		sk := Skill{ID: e.Name(), Name: e.Name(), Path: p}
		fm := frontmatter(p)
		if v := fm["name"]; v != "" {
			sk.Name = v
		}
		sk.Description = fm["description"]
		if v := fm["cli"]; v != "" {
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, e.Name(), v)
			}
			if rel, err := filepath.Rel(filepath.Join(dir, e.Name()), v); err == nil && !strings.HasPrefix(rel, "..") {
				sk.CLI = v // a skill's CLI stays inside its folder
			}
		}
		out = append(out, sk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// frontmatter reads the simple "key: value" lines of a SKILL.md's leading
// --- block (the Claude skills format); nested YAML is ignored.
func frontmatter(path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	out := map[string]string{}
	for n := 0; sc.Scan() && n < 64; n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if n == 0 {
			if strings.TrimSpace(line) != "---" {
				return out
			}
			continue
		}
		if strings.TrimSpace(line) == "---" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(k, " ") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out
}

// skillAllowed applies skillAllowlist then skillDenylist to a skill id.
func skillAllowed(a config.Agent, id string) bool {
	if a.SkillAllowlist != nil && !anyGlob(a.SkillAllowlist, id) {
		return false
	}
	return a.SkillDenylist == nil || !anyGlob(a.SkillDenylist, id)
}

// FilterSkills returns the skills agent a may use.
func FilterSkills(a config.Agent, all []Skill) []Skill {
	var out []Skill
	for _, sk := range all {
		if skillAllowed(a, sk.ID) {
			out = append(out, sk)
		}
	}
	return out
}

// For returns the skills listed in a's prompt: none unless its
// toolExposure is skills or mixed.
func (c *SkillCache) For(a config.Agent) []Skill {
	if !UsesSkills(a) {
		return nil
	}
	return FilterSkills(a, c.all())
}
