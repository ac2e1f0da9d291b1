package main

import (
	"os"
	"strings"
	"testing"
)

// TestIptablesFilesHoldExtensionLibraries: the kube-proxy image has the libraries its iptables
// extensions load, not only xtables-nft-multi's: libxt_statistic.so (kube-proxy's random
// load balancing between endpoints) needs libm.so.6, which the program itself does not link.
func TestIptablesFilesHoldExtensionLibraries(t *testing.T) {
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/xtables/libxt_statistic.so"); err != nil {
		t.Skipf("Debian's iptables (amd64) is not installed here: %v", err)
	}
	files, err := iptablesFiles()
	if err != nil {
		t.Fatal(err)
	}
	var ext, libm bool
	for _, f := range files {
		ext = ext || strings.HasSuffix(f.Path, "xtables/libxt_statistic.so")
		libm = libm || strings.HasSuffix(f.Path, "/libm.so.6") && len(f.Data) > 0
	}
	if !ext || !libm {
		t.Errorf("kube-proxy's iptables files: libxt_statistic.so %v, libm.so.6 %v; want both", ext, libm)
	}
}
