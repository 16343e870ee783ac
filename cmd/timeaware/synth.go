package main

import "github.com/spf13/cobra"

func (a *app) synthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Synthetic timestamps and time-budgeted prompt sets",
	}
	cmd.AddCommand(a.synthTimestampsCmd(), a.synthBudgetCmd(), a.synthSFTCmd())
	return cmd
}
