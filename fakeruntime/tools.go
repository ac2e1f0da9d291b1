package fakeruntime

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Programs of the Kubernetes docs' task pages that the fake models: the pi Job's perl one-liner
// and the memory-demo pods' stress.

// perlBpi matches the pi Job's script: print bpi(N).
var perlBpi = regexp.MustCompile(`^\s*print\s+bpi\(\s*(\d+)\s*\)\s*;?\s*$`)

// maxPiDigits bounds bpi(N): the digits are computed, and a few thousand take milliseconds.
const maxPiDigits = 20000

// parsePerl models `perl -Mbignum=bpi -wle 'print bpi(N)'`: it prints pi to N significant digits,
// rounded, as Math::BigFloat does. Any other perl program is not modelled.
func parsePerl(words []string) (step, bool) {
	bignum, script := false, ""
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-Mbignum=bpi" || w == "-Mbigrat=bpi":
			bignum = true
		case strings.HasPrefix(w, "-") && strings.HasSuffix(w, "e") && i+1 < len(words):
			script = words[i+1]
			i++
		case !strings.HasPrefix(w, "-"):
			return step{}, false // a script file
		}
	}
	m := perlBpi.FindStringSubmatch(script)
	if !bignum || m == nil {
		return step{}, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 || n > maxPiDigits {
		return step{kind: stepFail, code: 255, text: fmt.Sprintf("perl: the fake runtime computes bpi(N) for N from 1 to %d", maxPiDigits)}, true
	}
	return step{kind: stepEcho, text: piDigits(n)}, true
}

// piDigits is pi to n significant digits, rounded: piDigits(10) = "3.141592654". It uses Machin's
// formula, pi = 16 arctan(1/5) - 4 arctan(1/239), in fixed point with 10 guard digits.
func piDigits(n int) string {
	const guard = 10
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n-1+guard)), nil)
	pi := new(big.Int).Mul(arctanInv(5, scale), big.NewInt(16))
	pi.Sub(pi, new(big.Int).Mul(arctanInv(239, scale), big.NewInt(4)))
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(guard), nil)
	pi.Add(pi, new(big.Int).Div(unit, big.NewInt(2))) // round half up
	digits := pi.Div(pi, unit).String()
	if len(digits) == 1 {
		return digits
	}
	return digits[:1] + "." + digits[1:]
}

// arctanInv is arctan(1/x) * scale: the series 1/x - 1/(3x³) + 1/(5x⁵) - …, truncated.
func arctanInv(x int64, scale *big.Int) *big.Int {
	sum := new(big.Int)
	power := new(big.Int).Div(scale, big.NewInt(x)) // scale / x^(2k+1)
	x2 := big.NewInt(x * x)
	term := new(big.Int)
	for k := int64(0); power.Sign() != 0; k++ {
		term.Div(power, big.NewInt(2*k+1))
		if k%2 == 0 {
			sum.Add(sum, term)
		} else {
			sum.Sub(sum, term)
		}
		power.Div(power, x2)
	}
	return sum
}

// parseStress models stress (github.com/resurrecting-open-source-projects/stress, the docs'
// polinux/stress image): --vm N workers each hold --vm-bytes (default 256M; suffixes B K M G,
// powers of 1024) and --cpu N workers each burn a core, on paper (usage.go), until the container
// stops; over the memory limit the container is OOM-killed. --vm-hang, --vm-keep, --timeout, --io
// and --hdd are accepted; the timeout is not modelled (the workers run until stopped).
func parseStress(args []string) step {
	var vm, cpu uint64
	vmBytes := uint64(256 << 20)
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := ""
		if i+1 < len(args) {
			val = args[i+1]
		}
		var err error
		switch a {
		case "-cpus": // vish/stress
			cpu, err = strconv.ParseUint(val, 10, 32)
		case "-mem-total":
			vm, vmBytes, err = 1, 0, nil
			if q, qerr := resource.ParseQuantity(val); qerr != nil || q.Sign() < 0 {
				err = errors.New("bad quantity")
			} else {
				vmBytes = uint64(q.Value())
			}
		case "-mem-alloc-size", "-mem-alloc-sleep":
		case "-logtostderr":
			continue
		case "--vm", "-m":
			vm, err = strconv.ParseUint(val, 10, 32)
		case "--cpu", "-c":
			cpu, err = strconv.ParseUint(val, 10, 32)
		case "--vm-bytes":
			vmBytes, err = stressBytes(val)
		case "--vm-hang", "--vm-stride", "--timeout", "-t", "--io", "-i", "--hdd", "-d", "--hdd-bytes", "--backoff":
		case "--vm-keep", "-v", "--verbose", "-q", "--quiet", "-n", "--dry-run":
			continue
		default:
			return step{kind: stepFail, code: 1, text: fmt.Sprintf("stress: FAIL: [1] unrecognized option '%s' (the fake runtime's stress knows --vm, --vm-bytes, --cpu)", a)}
		}
		if err != nil || val == "" {
			return step{kind: stepFail, code: 1, text: fmt.Sprintf("stress: FAIL: [1] invalid value for %s: '%s'", a, val)}
		}
		i++
	}
	text := fmt.Sprintf("stress: info: [1] dispatching hogs: %d cpu, 0 io, %d vm, 0 hdd", cpu, vm)
	if vm > 0 {
		return step{kind: stepAlloc, n: vm * vmBytes, burnAlso: cpu * 1_000_000_000, hold: true, text: text}
	}
	return step{kind: stepBurn, n: cpu * 1_000_000_000, hold: true, text: text}
}

// stressBytes parses stress's size: a number with an optional suffix B, K, M or G (powers of 1024).
func stressBytes(s string) (uint64, error) {
	mult := uint64(1)
	if n := len(s); n > 0 {
		if i := strings.IndexByte("BKMG", s[n-1]&^0x20); i >= 0 {
			mult, s = uint64(1)<<(10*i), s[:n-1]
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v * mult, err
}
