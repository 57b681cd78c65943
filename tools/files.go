package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
)

type pathArgs struct {
	Path *string `json:"path"`
}

// DirEntry is one row of list_dir's result.
type DirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"` // "file", "dir", "symlink" or "other"
	Size int64  `json:"size,omitempty"`
}

// DirListing is list_dir's result, returned as JSON.
type DirListing struct {
	Path      string     `json:"path"`
	Entries   []DirEntry `json:"entries"`
	Truncated bool       `json:"truncated,omitempty"`
}

func (e *Executor) prepareListDir(args json.RawMessage) (*call, error) {
	var a pathArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	rel, err := e.folder(a.Path)
	if err != nil {
		return nil, err
	}
	return &call{canon: map[string]any{"path": display(rel)}, run: func(ctx context.Context) (string, error) {
		f, err := e.ws.root.Open(rel)
		if err != nil {
			return "", rootErr(err)
		}
		defer f.Close()
		ents, err := f.ReadDir(-1)
		if err != nil {
			return "", err
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		out := DirListing{Path: display(rel), Entries: []DirEntry{}}
		for i, de := range ents {
			if i == e.opts.MaxEntries {
				out.Truncated = true
				break
			}
			d := DirEntry{Name: de.Name()}
			switch t := de.Type(); {
			case t.IsDir():
				d.Type = "dir"
			case t&fs.ModeSymlink != 0:
				d.Type = "symlink"
			case t.IsRegular():
				d.Type = "file"
				if fi, err := de.Info(); err == nil {
					d.Size = fi.Size()
				}
			default:
				d.Type = "other"
			}
			out.Entries = append(out.Entries, d)
		}
		b, err := json.Marshal(out)
		return string(b), err
	}}, nil
}

func (e *Executor) prepareReadFile(args json.RawMessage) (*call, error) {
	rel, err := e.requiredPath(args)
	if err != nil {
		return nil, err
	}
	return &call{canon: map[string]any{"path": display(rel)}, run: func(ctx context.Context) (string, error) {
		f, fi, err := e.openRegular(rel)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, int64(e.opts.OutputCap)))
		if err != nil {
			return "", err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return "", fmt.Errorf("%w: %s is a binary file", ErrBadArguments, display(rel))
		}
		s := string(b)
		if fi.Size() > int64(len(b)) {
			s += fmt.Sprintf("\n[truncated: first %d of %d bytes]", len(b), fi.Size())
		}
		return s, nil
	}}, nil
}

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

func (e *Executor) prepareWriteFile(args json.RawMessage) (*call, error) {
	var a writeArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	p, err := required("path", a.Path)
	if err != nil {
		return nil, err
	}
	content, err := required("content", a.Content)
	if err != nil {
		return nil, err
	}
	if len(content) > e.opts.MaxWriteBytes {
		return nil, fmt.Errorf("%w: content is %d bytes, the limit is %d", ErrBadArguments, len(content), e.opts.MaxWriteBytes)
	}
	rel, err := e.ws.resolve(p)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, fmt.Errorf("%w: path names the workspace folder itself", ErrBadArguments)
	}
	c := &call{touches: []string{rel}, canon: map[string]any{"path": display(rel), "content": content}}
	perm := fs.FileMode(0o644)
	if fi, err := e.ws.root.Stat(rel); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %s exists and is not a regular file", ErrBadArguments, display(rel))
		}
		c.note = "overwrites the existing file " + display(rel)
		perm = fi.Mode().Perm()
	}
	c.run = func(ctx context.Context) (string, error) {
		if err := e.atomicWrite(rel, []byte(content), perm); err != nil {
			return "", err
		}
		return fmt.Sprintf("wrote %d bytes to %s", len(content), display(rel)), nil
	}
	return c, nil
}

func (e *Executor) prepareOpenPath(args json.RawMessage) (*call, error) {
	rel, err := e.requiredPath(args)
	if err != nil {
		return nil, err
	}
	return &call{canon: map[string]any{"path": display(rel)}, run: func(ctx context.Context) (string, error) {
		if _, err := e.ws.root.Stat(rel); err != nil {
			return "", rootErr(err)
		}
		abs := e.ws.abs(rel)
		if err := e.launch(ctx, e.openArgv(abs)); err != nil {
			return "", err
		}
		return "opened " + display(rel), nil
	}}, nil
}

// folder resolves an optional folder argument; absent or empty is the
// workspace's root.
func (e *Executor) folder(v *string) (string, error) {
	p := ""
	if v != nil {
		p = *v
	}
	return e.ws.resolve(p)
}

// requiredPath decodes the arguments of a tool whose only argument is a
// required "path" and resolves it inside the workspace.
func (e *Executor) requiredPath(args json.RawMessage) (string, error) {
	var a pathArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	p, err := required("path", a.Path)
	if err != nil {
		return "", err
	}
	return e.ws.resolve(p)
}
