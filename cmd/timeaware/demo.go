package main

import "github.com/spf13/cobra"

func (a *app) demoCmd() *cobra.Command {
	return &cobra.Command{Use: "demo", Short: "Run the pairs pipeline on the built-in sample", RunE: func(*cobra.Command, []string) error { return nil }}
}
