package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// followWait is how long one long poll of --follow waits for a new event.
const followWait = 30 * time.Second

// newJournalCommand is `minikubelet journal`: it prints the kubelet's journal ("what just
// happened?") from the loopback debug address, one aligned line per event, and with --follow
// keeps printing new events as they happen.
func newJournalCommand() *cobra.Command {
	var (
		follow  bool
		address string
		filter  journal.Filter
	)
	cmd := &cobra.Command{
		Use:   "journal [--follow] [--pod namespace/name] [--source s] [--address 127.0.0.1:10256]",
		Short: "Print what the kubelet just did: syncLoop channels, pod workers, CRI calls, PLEG, status, lease",
		Long: `journal prints the events minikubelet keeps in its journal (the latest 4096), one line each:
seq, time, source, kind, pod, then the message and fields. Sources are syncloop, podworker,
cri, pleg, status, lease, secrets, probe and start (the start order's steps).

It reads them from minikubelet's loopback debug address (--debug-address, which make run
sets to 127.0.0.1:10256). With --follow it then waits for new events and prints them as they
happen, until Ctrl-C. Examples:

  minikubelet journal --pod default/web
  minikubelet journal --follow --source cri`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			base := address
			if !strings.Contains(base, "://") {
				base = "http://" + base
			}
			return printJournal(cmd.Context(), journal.Client{BaseURL: base}, filter, follow, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until Ctrl-C")
	cmd.Flags().StringVar(&filter.Pod, "pod", "", "only the events of this pod, namespace/name")
	cmd.Flags().StringVar(&filter.Source, "source", "", "only the events of this source: syncloop, podworker, cri, pleg, status, lease, secrets, probe, eviction, volume or start")
	cmd.Flags().StringVar(&address, "address", "127.0.0.1:10256", "minikubelet's --debug-address")
	return cmd
}

// printJournal prints the events that match filter, then, with follow, every new one until ctx
// ends (a clean exit). It survives a kubelet restart: the journal starts again, and so does it.
func printJournal(ctx context.Context, c journal.Client, filter journal.Filter, follow bool, out, errOut io.Writer) error {
	page, err := c.Read(ctx, 0, filter, 0)
	if err != nil {
		return fmt.Errorf("read the journal at %s: %w (is minikubelet running with --debug-address? make run passes 127.0.0.1:10256)", c.BaseURL, err)
	}
	fmt.Fprintln(out, journal.TextHeader())
	printEvents(out, page.Events)
	since := page.LastSeq
	for follow {
		page, err := c.Read(ctx, since, filter, followWait)
		switch {
		case ctx.Err() != nil:
			return nil // Ctrl-C
		case err != nil:
			fmt.Fprintf(errOut, "journal: %v; retrying\n", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		case page.LastSeq < since:
			fmt.Fprintln(errOut, "journal: minikubelet restarted; its journal starts again")
			since = 0
			continue
		case since > 0 && page.OldestSeq > since+1:
			fmt.Fprintf(errOut, "journal: %d events were overwritten before they could be read\n", page.OldestSeq-since-1)
		}
		printEvents(out, page.Events)
		since = page.LastSeq
	}
	return nil
}

func printEvents(out io.Writer, events []journal.Event) {
	for _, e := range events {
		fmt.Fprintln(out, e.Text(time.Local))
	}
}
