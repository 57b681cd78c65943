package app

// Bindings behind the window's panels: the audit log view (list with
// filters, export, verify), first-run provider setup, the proxy agents'
// Test action and round-table runs.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
)

// AuditFilter is what the audit panel filters by; empty fields match
// everything. Since and Until are dates (YYYY-MM-DD, local time, both
// inclusive) or RFC 3339 times.
type AuditFilter struct {
	Tool      string `json:"tool"`
	Decision  string `json:"decision"`
	DecidedBy string `json:"decidedBy"`
	SessionID string `json:"sessionId"`
	Since     string `json:"since"`
	Until     string `json:"until"`
	Limit     int    `json:"limit"`
}

// AuditPage is AuditList's answer: rows newest first.
type AuditPage struct {
	Entries []audit.Entry `json:"entries"`
	// More says the limit cut the list.
	More bool `json:"more"`
}

// AuditExport is AuditExportJSONL's answer.
type AuditExport struct {
	Path      string `json:"path"`
	Rows      int    `json:"rows"`
	Cancelled bool   `json:"cancelled,omitempty"`
}

func (f AuditFilter) filter(now time.Time) (audit.Filter, error) {
	out := audit.Filter{Tool: strings.TrimSpace(f.Tool), Decision: f.Decision, DecidedBy: f.DecidedBy, SessionID: strings.TrimSpace(f.SessionID)}
	var err error
	if out.Since, err = parseWhen(f.Since, false, now); err != nil {
		return out, fmt.Errorf("from: %w", err)
	}
	if out.Until, err = parseWhen(f.Until, true, now); err != nil {
		return out, fmt.Errorf("to: %w", err)
	}
	if !out.Since.IsZero() && !out.Until.IsZero() && !out.Until.After(out.Since) {
		return out, errors.New("the end date is before the start date")
	}
	return out, nil
}

// parseWhen reads a date (the end of the day when end is set: the bound is
// exclusive) or an RFC 3339 time; "" is no bound.
func parseWhen(s string, end bool, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, now.Location()); err == nil {
		if end {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
	}
	return t, nil
}

func (a *App) auditLog() (*audit.Log, error) {
	if a.audit == nil {
		return nil, errors.New("the audit log is not available")
	}
	return a.audit, nil
}

// AuditList lists audit rows newest first (at most f.Limit, default 500).
func (a *App) AuditList(f AuditFilter) (AuditPage, error) {
	lg, err := a.auditLog()
	if err != nil {
		return AuditPage{}, err
	}
	af, err := f.filter(time.Now())
	if err != nil {
		return AuditPage{}, err
	}
	limit := f.Limit
	if limit <= 0 || limit > 5000 {
		limit = 500
	}
	af.Newest, af.Limit = true, limit+1
	ctx, cancel := a.reqCtx()
	defer cancel()
	es, err := lg.List(ctx, af)
	if err != nil {
		return AuditPage{}, err
	}
	p := AuditPage{Entries: es}
	if len(es) > limit {
		p.Entries, p.More = es[:limit], true
	}
	return p, nil
}

// AuditVerify recomputes the hash chain: OK, or the first row that was
// changed, removed or reordered.
func (a *App) AuditVerify() (audit.VerifyReport, error) {
	lg, err := a.auditLog()
	if err != nil {
		return audit.VerifyReport{}, err
	}
	ctx, cancel := context.WithTimeout(a.ctx, 2*time.Minute)
	defer cancel()
	return lg.Verify(ctx)
}

// AuditExportJSONL writes the rows f selects, oldest first, one JSON object a
// line, to a file the user picks in a save dialog (when the window has one)
// or to <data-dir>/audit-export-<time>.jsonl, and says where.
func (a *App) AuditExportJSONL(f AuditFilter) (AuditExport, error) {
	lg, err := a.auditLog()
	if err != nil {
		return AuditExport{}, err
	}
	af, err := f.filter(time.Now())
	if err != nil {
		return AuditExport{}, err
	}
	path, err := a.exportPath("audit-export-" + time.Now().Format("20060102-150405") + ".jsonl")
	if err != nil {
		return AuditExport{}, err
	}
	if path == "" {
		return AuditExport{Cancelled: true}, nil
	}
	ctx, cancel := context.WithTimeout(a.ctx, 2*time.Minute)
	defer cancel()
	n, err := writeExport(ctx, lg, path, af)
	if err != nil {
		return AuditExport{}, fmt.Errorf("export to %s: %w", path, err)
	}
	return AuditExport{Path: path, Rows: n}, nil
}

// exportPath asks the user where to save an export named name (the native
// save dialog), or, without one, puts it in the data dir; "" when cancelled.
func (a *App) exportPath(name string) (string, error) {
	if a.saveFile != nil {
		return a.saveFile(name)
	}
	if a.dataDir == "" {
		return "", errors.New("no folder to export to")
	}
	return filepath.Join(a.dataDir, name), nil
}

// lineCounter counts the lines written through it.
type lineCounter struct {
	w *bufio.Writer
	n int
}

func (c *lineCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			c.n++
		}
	}
	return c.w.Write(p)
}

func writeExport(ctx context.Context, lg *audit.Log, path string, f audit.Filter) (int, error) {
	tmp := path + ".part"
	fh, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	c := &lineCounter{w: bufio.NewWriter(fh)}
	err = lg.ExportJSONL(ctx, c, f)
	if err == nil {
		err = c.w.Flush()
	}
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return c.n, nil
}

// Providers is GET /v1/providers: what is configured and which local
// model servers answer (for the setup form). Keys are never part of it.
func (a *App) Providers() (api.ProvidersInfo, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.ProvidersInfo
	if err := a.c.Do(ctx, http.MethodGet, "/v1/providers", nil, &out); err != nil {
		return out, friendly(err)
	}
	return out, nil
}

// SetProvider is PUT /v1/providers: an OpenAI key (stored in the OS keyring
// by the service) or an OpenAI-compatible base URL and model. The key is
// neither logged nor returned.
func (a *App) SetProvider(req api.SetProviderRequest) (api.ProvidersInfo, error) {
	req.Provider = strings.TrimSpace(req.Provider)
	req.APIKey = strings.TrimSpace(req.APIKey)
	req.BaseURL = strings.TrimSpace(req.BaseURL)
	req.Model = strings.TrimSpace(req.Model)
	switch req.Provider {
	case "openai":
		if req.APIKey == "" {
			return api.ProvidersInfo{}, errors.New("enter your OpenAI API key")
		}
	case "openai-compatible":
		if req.BaseURL == "" || req.Model == "" {
			return api.ProvidersInfo{}, errors.New("enter the server's base URL and a model")
		}
	default:
		return api.ProvidersInfo{}, errors.New("choose OpenAI or an OpenAI-compatible server")
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.ProvidersInfo
	if err := a.c.Do(ctx, http.MethodPut, "/v1/providers", req, &out); err != nil {
		a.log.Info("provider setup refused", "provider", req.Provider, "err", friendly(err)) // never the key
		return out, friendly(err)
	}
	a.log.Info("provider configured", "provider", req.Provider, "model", req.Model, "configured", out.Configured)
	return out, nil
}

// TestAgent runs a proxy agent's Test action with a sample message.
func (a *App) TestAgent(agentID, text string) (api.ProxyTestReport, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 3*time.Minute)
	defer cancel()
	var out api.ProxyTestReport
	err := a.c.Do(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(agentID)+"/test", api.ProxyTestRequest{Text: strings.TrimSpace(text)}, &out)
	if err != nil {
		return out, friendly(err)
	}
	return out, nil
}

// Roundtable returns a stored round-table run with every answer and the result.
func (a *App) Roundtable(runID string) (api.RoundtableRun, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.RoundtableRun
	if err := a.c.Do(ctx, http.MethodGet, "/v1/roundtables/"+url.PathEscape(runID), nil, &out); err != nil {
		return out, friendly(err)
	}
	return out, nil
}
