// Command timeaware makes training data and rewards for LLM agents that must
// be aware of time. Run "timeaware --help" for the commands.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
