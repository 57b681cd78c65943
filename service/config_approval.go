package service

// Approval of the config file: config.json can start programs (CLI and ACP
// agents' commands) and send secrets to URLs (providers' baseUrl and
// apiKeyRef), so a content the user did not approve is never applied. The
// approved content is kept in the data dir (internal/approved), which the
// file tools cannot reach; the setup page's writes are approved as they are
// made (PUT /v1/providers), and any other change (an editor, a sync tool, a
// program) waits for `jarvis config approve` / `jarvis-service config
// approve` in a terminal. Meanwhile the last approved content keeps
// running, or the built-in defaults when there is none (a file written by
// hand before the first start), and GET /v1/agents carries the warning
// that says what the file would start and how to approve it.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"jarvis/api"
	"jarvis/internal/approved"
	"jarvis/service/config"
	"jarvis/service/httpapi"
)

// ConfigApproval is the config file's name in the approved store.
const ConfigApproval = "config.json"

// ErrConfigNotApproved: the config file changed outside Jarvis and waits
// for the user's approval.
var ErrConfigNotApproved = errors.New("the config file changed outside Jarvis and is not applied until you approve it")

// LoadConfig reads the config file at path as the service applies it. With
// store, content the user has not approved is not applied: the last
// approved content is (or the built-in defaults, when there is none) and
// warning says why and how to approve. A missing file is the defaults, as
// config.Load. Without store the file is applied as it is.
func LoadConfig(path string, store *approved.Store) (cfg *config.Config, warning string, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return config.Defaults(), "", nil
	}
	if err != nil {
		return nil, "", &config.Error{File: path, Msg: err.Error()}
	}
	if store == nil {
		c, err := config.Parse(path, b)
		return c, "", err
	}
	ok, err := store.Check(ConfigApproval, b)
	if err != nil {
		return nil, "", err
	}
	if ok {
		c, err := config.Parse(path, b)
		return c, "", err
	}
	warning = notApproved(path, b)
	last, had, err := store.Last(ConfigApproval)
	if err != nil {
		return nil, "", err
	}
	if !had {
		return config.Defaults(), warning, nil
	}
	c, err := config.Parse(path+" (as last approved)", last)
	if err != nil {
		return config.Defaults(), warning, nil
	}
	return c, warning, nil
}

// notApproved is the warning of an unapproved config file: what it would
// start and where it would connect, and the command that approves it.
func notApproved(path string, content []byte) string {
	return fmt.Sprintf("%s changed outside Jarvis and is not applied until you approve it (the configuration approved before stays in use). It would: %s. To apply it, run in a terminal: jarvis config approve --config %s",
		path, strings.Join(approved.Summarize(content), "; "), path)
}

// markPending records content as the config waiting for approval.
func (s *Service) markPending(path string, content []byte) {
	s.pendingConf.Store(&api.PendingConfig{Path: path, Hash: approved.Hash(content), Lines: approved.Summarize(content)})
}

// handleApproveConfig is POST /v1/config/approve: the window's Approve on
// the pending config it showed. The content on disk must still be the one
// whose hash the window shows (409 config_changed otherwise); it is then
// approved and applied.
func (s *Service) handleApproveConfig(w http.ResponseWriter, r *http.Request) error {
	var req api.ApproveConfigRequest
	if err := httpapi.DecodeJSON(w, r, &req, s.cfg().MaxBodyBytes); err != nil {
		return err
	}
	if req.Hash == "" {
		return httpapi.Missing("hash")
	}
	if s.approved == nil || s.configPath == "" {
		return httpapi.Errorf(http.StatusConflict, "config_not_approvable", "this service applies its config file as it is; there is nothing to approve")
	}
	b, err := os.ReadFile(s.configPath)
	if err != nil {
		return err
	}
	if _, err := config.Parse(s.configPath, b); err != nil {
		return httpapi.Errorf(http.StatusConflict, "config_invalid", "the config file cannot be applied: %v", err)
	}
	if err := s.approved.ApproveHash(ConfigApproval, b, req.Hash); errors.Is(err, approved.ErrChanged) {
		if s.pendingConf.Load() != nil {
			s.markPending(s.configPath, b)
		}
		return httpapi.Errorf(http.StatusConflict, "config_changed", "the config file changed after it was shown; look at it again before approving")
	} else if err != nil {
		return err
	}
	s.log.Info("config file approved in the window", "config", s.configPath, "sha256", req.Hash)
	if err := s.ReloadConfig(s.configPath); err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"approved": true})
}

// ApproveConfigCommand is `jarvis config approve` and `jarvis-service
// config approve`: it shows what the config file would start and where it
// would connect, asks (unless --yes), and approves exactly the content it
// showed. A running Jarvis applies it at once (it watches the approvals).
// It returns the exit code.
func ApproveConfigCommand(prog string, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet(prog+" config approve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "config file (default: <user config dir>/jarvis/config.json)")
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir)")
	yes := fs.Bool("yes", false, "approve without asking")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s config approve: %v\n", prog, err)
		return 1
	}
	var err error
	if *configPath == "" {
		if *configPath, err = DefaultConfigPath(); err != nil {
			return fail(err)
		}
	}
	if *dataDir == "" {
		if *dataDir, err = DefaultDataDir(getenv); err != nil {
			return fail(err)
		}
	}
	b, err := os.ReadFile(*configPath)
	if err != nil {
		return fail(err)
	}
	if _, err := config.Parse(*configPath, b); err != nil {
		return fail(fmt.Errorf("the file is not a valid configuration, nothing approved: %w", err))
	}
	store, err := approved.Open(*dataDir)
	if err != nil {
		return fail(err)
	}
	if ok, _ := store.Check(ConfigApproval, b); ok {
		fmt.Fprintf(stdout, "%s is already approved.\n", *configPath)
		return 0
	}
	hash := approved.Hash(b)
	fmt.Fprintf(stdout, "%s (sha256 %s) would:\n", *configPath, hash)
	for _, l := range approved.Summarize(b) {
		fmt.Fprintf(stdout, "  - %s\n", l)
	}
	if !*yes {
		fmt.Fprint(stdout, "Apply this configuration? [y/N] ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Not approved.")
			return 1
		}
	}
	if err := store.ApproveHash(ConfigApproval, b, hash); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "Approved %s.\n", *configPath)
	return 0
}
