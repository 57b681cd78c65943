package acprt

// The stdio bridge to Jarvis's MCP endpoint, for ACP agents that take MCP
// servers only over stdio (mcpCapabilities without http): the agent is
// given a stdio server whose command is this bridge (a hidden subcommand
// of jarvis and jarvis-service), with the endpoint's address and the
// session's token in its environment, never on its command line. The
// bridge passes every MCP message between the agent (go-sdk's stdio
// transport) and the endpoint (go-sdk's Streamable HTTP client transport)
// unchanged, so each tools/call meets the desktop's gate and audit as an
// HTTP agent's does.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BridgeSubcommand is the hidden subcommand that runs the bridge.
const BridgeSubcommand = "__mcp-bridge"

// The bridge's environment: the endpoint and the session's token.
const (
	BridgeURLVar   = "JARVIS_MCP_URL"
	BridgeTokenVar = "JARVIS_MCP_TOKEN"
)

// BridgeHelper is the argv that runs the bridge from the binary exe (its
// own path): exe with the hidden subcommand.
func BridgeHelper(exe string) []string { return []string{exe, BridgeSubcommand} }

// ThisBinarysBridge is BridgeHelper of the running binary (jarvis or
// jarvis-service); nil (such agents get no MCP tools, logged) when the
// binary cannot name itself.
func ThisBinarysBridge(log *slog.Logger) []string {
	exe, err := os.Executable()
	if err != nil {
		log.Warn("ACP agents that take MCP servers only over stdio will not get Jarvis's tools: the binary cannot find itself", "err", err)
		return nil
	}
	return BridgeHelper(exe)
}

// Bridge runs the bridge until the agent closes its side (in at EOF) or
// the endpoint fails: the address and token come from getenv.
func Bridge(ctx context.Context, getenv func(string) string, in io.Reader, out io.Writer) error {
	url, tok := getenv(BridgeURLVar), getenv(BridgeTokenVar)
	if url == "" || tok == "" {
		return errors.New("the MCP bridge is started by Jarvis for an ACP agent, not by hand: it was given no endpoint to reach")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	agent, err := (&mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}).Connect(ctx)
	if err != nil {
		return err
	}
	defer agent.Close()
	hc := &http.Client{Transport: bearer{tok, http.DefaultTransport}}
	jarvis, err := (&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}).Connect(ctx)
	if err != nil {
		return err
	}
	defer jarvis.Close()
	errc := make(chan error, 2)
	go func() { // the agent's requests, to Jarvis
		for {
			msg, err := agent.Read(ctx)
			if err != nil {
				errc <- err
				return
			}
			if err := jarvis.Write(ctx, msg); err != nil {
				// The endpoint refused it (a revoked token, the service
				// gone): a call gets its error, so the agent is not left
				// waiting.
				if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
					_ = agent.Write(ctx, &jsonrpc.Response{ID: req.ID,
						Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Jarvis's MCP endpoint did not take the request: " + err.Error()}})
				}
			}
		}
	}()
	go func() { // Jarvis's answers, to the agent
		for {
			msg, err := jarvis.Read(ctx)
			if err == nil {
				err = agent.Write(ctx, msg)
			}
			if err != nil {
				errc <- fmt.Errorf("Jarvis's MCP endpoint: %w", err)
				return
			}
		}
	}()
	if err = <-errc; errors.Is(err, io.EOF) {
		return nil // the agent closed its side: its session ended
	}
	return err
}

// bearer adds the session's token to each request to the endpoint.
type bearer struct {
	tok  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.next.RoundTrip(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
