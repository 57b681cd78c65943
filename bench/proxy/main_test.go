package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestMeasure runs a short measurement: both paths must succeed against
// the scripted agent (Call checks the answer) and the table must be
// complete.
func TestMeasure(t *testing.T) {
	r, err := measure(context.Background(), 40, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.plain) != 40 || len(r.proxy) != 40 {
		t.Fatalf("got %d/%d samples, want 40 each", len(r.plain), len(r.proxy))
	}
	var out bytes.Buffer
	r.print(&out)
	for _, want := range []string{"| plain http.Client POST |", "| proxy.Client.Call |", "added by Call"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestMeasureService runs a short full-service measurement: every turn
// through the service must answer with the scripted agent's text.
func TestMeasureService(t *testing.T) {
	r, err := measureService(context.Background(), 30, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.direct) != 30 || len(r.service) != 30 {
		t.Fatalf("got %d/%d samples, want 30 each", len(r.direct), len(r.service))
	}
	var out bytes.Buffer
	r.print(&out)
	for _, want := range []string{"| agent directly (plain POST) |", "| service: POST /v1/chat → proxy agent |", "added by the service"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
