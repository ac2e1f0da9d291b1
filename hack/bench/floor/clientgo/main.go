// Command clientgo is the RSS floor of a process that talks to the API server with client-go as
// minikubelet does, and nothing else (see package floor).
package main

import "github.com/minikubelet/minikubelet/hack/bench/floor"

func main() { floor.Main() }
