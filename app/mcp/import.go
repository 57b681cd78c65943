package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"jarvis/internal/fsperm"
)

// ImportSources are the config files `jarvis mcp import` knows by name:
// Claude Desktop's and Cursor's, where each keeps them on this system.
func ImportSources() (map[string]string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return nil, err
	}
	// os.UserConfigDir is where Claude Desktop keeps it on every system
	// (~/.config, ~/Library/Application Support, %AppData%).
	claude := filepath.Join(cfg, "Claude", "claude_desktop_config.json")
	return map[string]string{"claude": claude, "cursor": filepath.Join(home, ".cursor", "mcp.json")}, nil
}

// Import copies the servers of src's mcpServers (a Claude Desktop or Cursor
// config, or any file of that shape) into dst (mcp.json), leaving the
// servers dst already has. src is validated first: a server Jarvis could
// not run is an error with src's file and line, and nothing is written.
// It returns the names added and those skipped because dst has them.
func Import(dst, src string) (added, skipped []string, err error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, nil, err
	}
	srcCfg, err := ParseConfig(src, b)
	if err != nil {
		return nil, nil, err
	}
	for _, sc := range srcCfg.Servers {
		if sc.Problem != "" {
			return nil, nil, errors.New(sc.Problem)
		}
	}
	var in struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", src, err)
	}
	added, skipped, _, err = mergeInto(dst, in.Servers)
	return added, skipped, err
}

// mergeInto adds the servers of in that dst does not have to dst (written
// atomically, 0600) and returns the names added and kept, and what it
// wrote (nil when nothing was added).
func mergeInto(dst string, in map[string]json.RawMessage) (added, skipped []string, content []byte, err error) {
	out := map[string]json.RawMessage{}
	if cur, err := os.ReadFile(dst); err == nil {
		if _, err := ParseConfig(dst, cur); err != nil {
			return nil, nil, nil, fmt.Errorf("%w (fix it before importing into it)", err)
		}
		if err := json.Unmarshal(cur, &out); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", dst, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, err
	}
	have := map[string]json.RawMessage{}
	if raw, ok := out["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &have); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: mcpServers: %w", dst, err)
		}
	}
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := have[n]; ok {
			skipped = append(skipped, n)
			continue
		}
		have[n] = in[n]
		added = append(added, n)
	}
	if len(added) == 0 {
		return nil, skipped, nil, nil
	}
	out["mcpServers"], _ = json.Marshal(have)
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return nil, nil, nil, err
	}
	data = append(data, '\n')
	return added, skipped, data, fsperm.WriteFile(dst, data)
}
