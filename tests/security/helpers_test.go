package security

import "encoding/json"

func jsonUnmarshal(b []byte, v any) { json.Unmarshal(b, v) }
