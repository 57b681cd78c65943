package a2art

// Answers that come after their turn, followed across restarts: a turn that
// ended with its task unfinished keeps the task in the store (a2a_late)
// until its answer came or lateWindow passed. FollowLate, run by the
// service for as long as it runs, reads each such task with tasks/get: at
// once, then less and less often. An ended task is its late answer, taken
// once (store.TakeLateTask) whether a push delivery or the poll found it
// first. A push token lives only in the process that minted it, so after a
// restart the poll is what brings the answer.

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"jarvis/service/config"
	"jarvis/service/store"
)

// lateBackoff caps the wait between two reads of one task (times LatePoll).
const lateBackoff = 16

// keepLate records a task whose turn ended before it did.
func (rt *Runtime) keepLate(agentID, sessionID string, taskID a2a.TaskID) {
	err := rt.env.Store.KeepLateTask(context.Background(), store.LateTask{AgentID: agentID, TaskID: string(taskID), SessionID: sessionID,
		Until: rt.env.Now().Add(lateWindow)})
	if err != nil {
		rt.env.Log.Error("a2a: keeping a task whose answer may still come", "agent", agentID, "task", taskID, "err", err)
	}
}

// FollowLate reads the tasks whose answer may still come until stop is
// closed (see the file's comment).
func (rt *Runtime) FollowLate(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	poll := rt.opts.LatePoll
	if poll <= 0 {
		poll = time.Minute
	}
	f := follower{rt: rt, poll: poll, next: map[string]time.Time{}, wait: map[string]time.Duration{}}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		f.look(ctx)
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// follower is FollowLate's state: when to read each task next.
type follower struct {
	rt   *Runtime
	poll time.Duration
	next map[string]time.Time
	wait map[string]time.Duration
}

// look reads every kept task that is due.
func (f *follower) look(ctx context.Context) {
	rt := f.rt
	tasks, err := rt.env.Store.LateTasks(ctx)
	if err != nil {
		if ctx.Err() == nil {
			rt.env.Log.Error("a2a: reading the tasks whose answer may still come", "err", err)
		}
		return
	}
	for _, lt := range tasks {
		if ctx.Err() != nil {
			return
		}
		key := lt.AgentID + "\x00" + lt.TaskID
		now := rt.env.Now()
		agent, ok := rt.env.Config().Agent(lt.AgentID)
		switch {
		case now.After(lt.Until):
			rt.forget(ctx, lt, "its window for a late answer passed")
			continue
		case !ok || agent.Type != config.TypeA2A:
			rt.forget(ctx, lt, "its agent is no longer an A2A agent here")
			continue
		case now.Before(f.next[key]):
			continue
		}
		task, err := rt.readTask(ctx, agent, lt)
		if err == nil && (task.Status.State.Terminal() || task.Status.State == a2a.TaskStateInputRequired || task.Status.State == a2a.TaskStateAuthRequired) {
			rt.env.Log.Info("a2a: a task that outlived its turn has ended", "agent", agent.AgentID, "task", lt.TaskID, "state", task.Status.State)
			rt.lateAnswer(ctx, agent, lt.SessionID, task)
			delete(f.next, key)
			delete(f.wait, key)
			continue
		}
		if err != nil && ctx.Err() == nil {
			rt.env.Log.Info("a2a: a task that outlived its turn could not be read; trying again later", "agent", agent.AgentID, "task", lt.TaskID, "err", plain(err))
		}
		w := min(max(f.wait[key]*2, f.poll), lateBackoff*f.poll)
		f.wait[key], f.next[key] = w, now.Add(w)
	}
}

// readTask reads one kept task from its agent.
func (rt *Runtime) readTask(ctx context.Context, agent config.Agent, lt store.LateTask) (*a2a.Task, error) {
	x, err := rt.settings.Get(agent)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	card, err := rt.card(ctx, agent, x)
	if err != nil {
		return nil, err
	}
	ctx, client, err := rt.dial(ctx, agent, x, card, nil, lt.SessionID)
	if err != nil {
		return nil, err
	}
	defer client.Destroy()
	return client.GetTask(ctx, &a2a.TaskQueryParams{ID: a2a.TaskID(lt.TaskID)})
}

// forget drops a kept task, saying why in the log.
func (rt *Runtime) forget(ctx context.Context, lt store.LateTask, why string) {
	if _, err := rt.env.Store.TakeLateTask(ctx, lt.AgentID, lt.TaskID); err != nil {
		rt.env.Log.Error("a2a: forgetting a task", "agent", lt.AgentID, "task", lt.TaskID, "err", err)
		return
	}
	rt.env.Log.Info("a2a: no longer waiting for a task's answer", "agent", lt.AgentID, "task", lt.TaskID, "why", why)
}
