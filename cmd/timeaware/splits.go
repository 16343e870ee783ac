package main

import "github.com/spf13/cobra"

func (a *app) splitsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "splits",
		Short: "Scenario-level train/test splits and the leakage gate",
	}
	cmd.AddCommand(a.splitsCheckCmd())
	return groupCommand(cmd)
}
