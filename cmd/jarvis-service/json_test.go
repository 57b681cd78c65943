package main

import "encoding/json"

func jsonDecode(b []byte, v any) { json.Unmarshal(b, v) }
