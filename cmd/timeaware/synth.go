package main

import "github.com/spf13/cobra"

func (a *app) synthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Synthetic timestamps, time-budgeted prompt sets and verifiable temporal tasks",
	}
	cmd.AddCommand(a.synthTimestampsCmd(), a.synthBudgetCmd(), a.synthDistillCmd(), a.synthSFTCmd(),
		a.synthPuzzlesCmd(), a.synthTravelerCmd(), a.synthNegotiationCmd())
	return groupCommand(cmd)
}
