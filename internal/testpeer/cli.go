package testpeer

// ClaudeTurn is one scripted claude turn in stream-json (the format
// service/cliagent's tests describe): thinking, text, a Bash tool use and
// its result, the final answer; the CLI's session id is "sess-1".
const ClaudeTurn = `{"type":"system","subtype":"init","session_id":"sess-1","tools":["Bash"]}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"Look first."},{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},"parent_tool_use_id":null,"session_id":"sess-1"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.go","is_error":false}]},"parent_tool_use_id":null,"session_id":"sess-1"}
{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"One file: a.go."}]},"parent_tool_use_id":null,"session_id":"sess-1"}
{"type":"result","subtype":"success","is_error":false,"result":"One file: a.go.","session_id":"sess-1"}
`
