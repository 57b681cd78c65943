package api

// EventAgentCommands: the slash commands an ACP agent offers in this
// session changed (its available_commands_update); the data is the whole
// list. The window offers them in the composer's "/" menu; choosing one
// sends "/name input" as the message.
const EventAgentCommands = "agent.commands"

// AgentCommandsEvent is the data of agent.commands.
type AgentCommandsEvent struct {
	Commands []AgentCommand `json:"commands"`
	TurnID   string         `json:"turn_id,omitempty"`
}

// AgentCommand is one slash command of an ACP agent.
type AgentCommand struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Hint describes the input typed after the name; "" when it takes none.
	Hint string `json:"hint,omitempty"`
}
