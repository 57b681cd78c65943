package service

// Scheduled tasks (service/tasks) in the service: the API of tasks and the
// Inbox, tasks.json, and, in the process that runs them (the desktop's
// service, under a window or `jarvis --headless`), the scheduler and each
// run: its own session, its agent narrowed to the task's tools, its calls
// marked as the task's (turn.Turn.Task), its outcome one Inbox item.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/chatrt"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/llm"
	"jarvis/service/store"
	"jarvis/service/tasks"
	"jarvis/service/turn"
	"jarvis/tools"
)

func (s *Service) tasksAPI() *tasks.API {
	return &tasks.API{Store: s.st, Now: s.now, MaxBody: s.cfg().MaxBodyBytes,
		CheckAgent: func(id string) error {
			a, err := s.agentForNewSession(id)
			if err != nil {
				return fmt.Errorf("no agent %q is configured", id)
			}
			if a.Type != config.TypeChat {
				return fmt.Errorf("agent %q is a %s agent; tasks run on chat agents", a.AgentID, a.Type)
			}
			return nil
		},
		Changed: func() {
			if s.sched != nil {
				s.sched.Poke()
			}
		},
		Tools: func(id string) ([]string, error) {
			a, err := s.agentForNewSession(id)
			if err != nil {
				return nil, err
			}
			return s.chat.ToolNames(a), nil
		},
		RunNow: func(ctx context.Context, t api.Task) (store.RunRow, error) {
			if s.sched == nil {
				return store.RunRow{}, httpapi.Errorf(http.StatusConflict, "tasks_not_run_here", "task %q cannot be run now: this Jarvis does not run tasks", t.Name)
			}
			return s.sched.RunNow(ctx, t)
		},
		Resume: s.resumeRun}
}

// startTasks loads tasks.json and, when this process runs tasks, starts the
// scheduler; a tasks.json that cannot be read leaves the stored tasks as
// they are and says why in the log.
func (s *Service) startTasks(ctx context.Context, opts Options) error {
	if opts.RunTasks {
		// Runs and approvals a stopped process left behind ended with it.
		runs, err := s.st.InterruptRuns(ctx)
		if err != nil {
			return fmt.Errorf("service: tasks: %w", err)
		}
		for _, r := range runs {
			s.log.Warn("tasks: a run a previous process left running is marked failed", "run", r.ID, "task", r.TaskID)
			s.inboxAdd(ctx, store.InboxRow{Kind: "failure", Title: "A task's run was stopped", Body: "Jarvis stopped while this run was going on.",
				SessionID: r.SessionID, TaskID: r.TaskID, RunID: r.ID, State: "open"})
		}
		if err := s.st.WithdrawPendingApprovals(ctx); err != nil {
			return fmt.Errorf("service: tasks: %w", err)
		}
	}
	if opts.TasksFile != "" {
		if err := s.syncTasksFile(ctx, opts.TasksFile); err != nil {
			s.log.Warn("tasks: tasks.json not loaded; the tasks stored before stay", "err", err)
		}
	}
	if !opts.RunTasks {
		return nil
	}
	owner := opts.TaskOwner
	if owner == "" {
		owner = "service"
	}
	s.sched = tasks.NewScheduler(tasks.Options{Store: s.st, Now: s.now, Owner: owner, Run: s.runTask, Log: s.log, Every: opts.TaskLookEvery})
	lctx, stop := context.WithCancel(context.Background())
	s.stopSched = stop
	s.schedDone = make(chan struct{})
	go func() {
		defer close(s.schedDone)
		s.sched.Loop(lctx)
	}()
	return nil
}

// stopTasks ends the scheduler's loop (no new claims) before the turns stop.
func (s *Service) stopTasks() {
	if s.stopSched != nil {
		s.stopSched()
		<-s.schedDone
	}
}

// syncTasksFile stores the tasks of tasks.json and removes the ones it no
// longer has.
func (s *Service) syncTasksFile(ctx context.Context, path string) error {
	list, err := tasks.LoadFile(path)
	if err != nil {
		return err
	}
	api := s.tasksAPI()
	keep := map[string]bool{}
	for _, t := range list {
		if _, err := api.Save(ctx, t, "file"); err != nil {
			return err
		}
		keep[t.ID] = true
	}
	rows, err := s.st.Tasks(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Source == "file" && !keep[r.ID] {
			if err := s.st.DeleteTask(ctx, r.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// TickTasks looks for due tasks once, at the service's clock (tests drive a
// fake clock through it), and waits for the runs it started.
func (s *Service) TickTasks(ctx context.Context) error {
	if s.sched == nil {
		return errors.New("service: this service does not run tasks")
	}
	_, err := s.sched.Tick(ctx)
	s.sched.Wait()
	return err
}

// runTask runs one claimed occurrence of t as its own session and records
// its outcome: the run's row and one Inbox item.
func (s *Service) runTask(ctx context.Context, t api.Task, run store.RunRow) {
	fail := func(msg string) {
		if err := s.st.UpdateRun(ctx, run.ID, "failed", "", "", msg, true); err != nil {
			s.log.Error("tasks: recording a run", "run", run.ID, "err", err)
		}
		s.inboxAdd(ctx, store.InboxRow{Kind: "failure", Title: t.Name + " failed", Body: msg, TaskID: t.ID, RunID: run.ID, State: "open"})
	}
	agent, err := s.agentForNewSession(t.Agent)
	if err != nil {
		fail(fmt.Sprintf("The task's agent %q is no longer configured.", t.Agent))
		return
	}
	occ, _ := time.Parse(time.RFC3339Nano, run.Occurrence)
	name := t.Name + " · " + occ.Local().Format("Mon 2 Jan 15:04")
	if run.CaughtUp {
		name += " (caught up)"
	}
	sess, err := s.st.CreateSession(ctx, store.Session{ID: newID("g_"), AgentID: agent.AgentID, Name: name,
		Attributes: runAttributes(t.ID, run.ID, s.modelOf(agent))})
	if err != nil {
		fail("Could not start the run: " + err.Error())
		return
	}
	tt, runFn, err := s.prepareTurn(ctx, sess, t.Prompt, "", "", nil)
	if err != nil {
		fail("Could not start the run: " + err.Error())
		return
	}
	s.startRunTurn(ctx, t, run, sess.ID, tt)
	s.log.Info("tasks: run started", "task", t.ID, "run", run.ID, "session", sess.ID, "turn", tt.ID)
	runFn()
	s.endRun(ctx, t, run, sess.ID, tt)
}

// startRunTurn makes tt the turn of t's run (its tools, its approval deadline)
// and records the run as running in sessionID.
func (s *Service) startRunTurn(ctx context.Context, t api.Task, run store.RunRow, sessionID string, tt *turn.Turn) {
	tt.Task = &api.TaskRef{TaskID: t.ID, TaskName: t.Name, RunID: run.ID, Tools: t.Tools,
		Deadline: s.now().Add(tasks.ApprovalWait(t)).UTC().Format(time.RFC3339Nano)}
	if err := s.st.UpdateRun(ctx, run.ID, "running", sessionID, tt.ID, "", false); err != nil {
		s.log.Error("tasks: recording a run", "run", run.ID, "err", err)
	}
}

// endRun records how run's turn tt ended: the run's row and one Inbox item.
func (s *Service) endRun(ctx context.Context, t api.Task, run store.RunRow, sessionID string, tt *turn.Turn) {
	select {
	case <-s.closing:
		// Stopped with the process: an approval its call waited for stays
		// in the Inbox (WithdrawPendingApprovals at the next start).
	default:
		if err := s.st.WithdrawRunApprovals(ctx, run.ID); err != nil {
			s.log.Error("tasks: settling a run's approvals", "run", run.ID, "err", err)
		}
	}
	status, kind, title, body := "done", "result", t.Name, tt.Final
	if tt.Fail != nil {
		status, kind, title, body = "failed", "failure", t.Name+" failed", tt.Fail.Message
		if tt.Fail.Code == "run_waiting" {
			// Not a failure to retry: the run goes on from its call once
			// the user allows it (resume.go settles this item then).
			title = t.Name + " stopped with Jarvis"
		}
	}
	if run.CaughtUp {
		title += " (a missed run, caught up)"
	}
	summary := snippet(body)
	if err := s.st.UpdateRun(ctx, run.ID, status, "", "", summary, true); err != nil {
		s.log.Error("tasks: recording a run", "run", run.ID, "err", err)
	}
	s.inboxAdd(ctx, store.InboxRow{Kind: kind, Title: title, Body: strings.TrimSpace(body), SessionID: sessionID, TaskID: t.ID, RunID: run.ID, State: "open"})
	s.log.Info("tasks: run ended", "task", t.ID, "run", run.ID, "status", status)
}

// waitsInInbox says whether a call of the run waits for approval in the
// Inbox.
func (s *Service) waitsInInbox(ctx context.Context, runID string) bool {
	yes, err := s.st.RunWaitsForApproval(ctx, runID)
	if err != nil {
		s.log.Warn("tasks: reading the Inbox", "run", runID, "err", err)
	}
	return yes
}

// runWaitingMessage ends a task's run that stopped with Jarvis while one of
// its calls waited for approval (error code run_waiting): it is not a
// failure to retry.
const runWaitingMessage = "Jarvis stopped while this run waited for your approval. The call waits in the Inbox: the run goes on from it once you allow it; denied or expired, the run ends there."

func (s *Service) inboxAdd(ctx context.Context, it store.InboxRow) {
	it.ID = turn.NewID("in_")
	if _, err := s.st.AddInbox(ctx, it); err != nil {
		s.log.Error("inbox: adding an item", "kind", it.Kind, "err", err)
	}
}

// ReadInbox lists the Inbox kept in dataDir's database, newest first (done
// items too with all), for `jarvis inbox` in a terminal, whether or not a
// Jarvis runs beside it.
func ReadInbox(ctx context.Context, dataDir string, all bool) (api.Inbox, error) {
	var out api.Inbox
	err := withStore(ctx, dataDir, func(st *store.Store) error {
		rows, unread, err := st.Inbox(ctx, all, 500)
		if err != nil {
			return err
		}
		out.Unread, out.Items = unread, make([]api.InboxItem, 0, len(rows))
		for _, r := range rows {
			out.Items = append(out.Items, tasks.Item(r))
		}
		return nil
	})
	return out, err
}

// MarkInboxDone marks an item of dataDir's Inbox done (and read).
func MarkInboxDone(ctx context.Context, dataDir, id string) error {
	return withStore(ctx, dataDir, func(st *store.Store) error {
		yes := true
		_, err := st.UpdateInbox(ctx, id, &yes, &yes, nil, nil)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("the Inbox has no item %q", id)
		}
		return err
	})
}

func withStore(ctx context.Context, dataDir string, f func(*store.Store) error) error {
	path := filepath.Join(dataDir, "jarvis.db")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no Jarvis data in %s yet: the Inbox is empty", dataDir)
	}
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st)
}

// registerTaskTool offers chat agents schedule_task ("remind me every
// Monday…"): it creates a task only once the user confirmed it at the gate,
// which shows the schedule and the task's tools in words.
func (s *Service) registerTaskTool() {
	def, _ := tools.Lookup("schedule_task") // its schema, shared with the desktop's gate
	s.chat.RegisterTool(chatrt.ServerTool{
		Spec: llm.ToolSpec{Name: def.Name, Description: def.Description, Parameters: def.Parameters}, Capabilities: def.Capabilities,
		Outbound: func(_ *config.Config, _ config.Agent, raw json.RawMessage) (string, bool) {
			t, err := taskFromArgs(raw)
			if err != nil {
				return "a task that cannot be created: " + err.Error(), true
			}
			n, _, err := tasks.Normalize(t)
			if err != nil {
				return "a task that cannot be created: " + err.Error(), true
			}
			return "a scheduled task, " + n.ScheduleWords + ". " + n.Policy, true
		},
		Run: func(ctx context.Context, tt *turn.Turn, agent config.Agent, raw json.RawMessage) (string, error) {
			t, err := taskFromArgs(raw)
			if err != nil {
				return "", err
			}
			t.Agent = agent.AgentID
			out, err := s.tasksAPI().Save(ctx, t, "conversation")
			if err != nil {
				var he *httpapi.Error
				if errors.As(err, &he) {
					return "", errors.New(he.Msg)
				}
				return "", err
			}
			return fmt.Sprintf("Scheduled %q (%s), first run %s. %s", out.Name, out.ScheduleWords, out.NextRun, out.Policy), nil
		},
	})
}

func taskFromArgs(raw json.RawMessage) (api.Task, error) {
	var a tools.ScheduleTaskArgs
	if err := tools.DecodeServiceArgs(raw, &a); err != nil {
		return api.Task{}, err
	}
	return api.Task{Name: a.Name, Prompt: a.Prompt, Schedule: a.Schedule, TimeZone: a.TimeZone, CatchUp: a.CatchUp, Tools: a.Tools}, nil
}
