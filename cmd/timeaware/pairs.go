package main

import "github.com/spf13/cobra"

func (a *app) pairsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pairs",
		Short: "DPO preference pairs from human-labelled tool-use trajectories",
	}
	cmd.AddCommand(a.pairsBuildCmd())
	return groupCommand(cmd)
}
