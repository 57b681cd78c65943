//go:build linux

package confine

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func LandlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// auditArch is the seccomp architecture of this build; 0 where the filter
// is not built (then SeccompAvailable is false and the prompt says so).
func auditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// SeccompAvailable reports whether this kernel filters system calls
// (/proc/self/status has a Seccomp line) and the filter is built for this
// architecture.
func SeccompAvailable() bool {
	if auditArch() == 0 {
		return false
	}
	b, err := os.ReadFile("/proc/self/status")
	return err == nil && strings.Contains(string(b), "\nSeccomp:")
}

// Classic BPF opcodes of a seccomp filter (linux/filter.h, linux/bpf_common.h).
const (
	bpfLdAbsW = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK   = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfRetK   = 0x06 // BPF_RET | BPF_K

	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000

	offNr   = 0  // seccomp_data.nr
	offArch = 4  // seccomp_data.arch
	offArg0 = 16 // seccomp_data.args[0], low 32 bits (little endian)

	x32SyscallBit = 0x40000000
)

// filterProgram is the seccomp filter: socket(AF_UNIX) refused (and every
// family but netlink without network), io_uring refused, another
// architecture's calls and x32 calls refused; everything else allowed.
func filterProgram(network bool) []unix.SockFilter {
	deny := func() unix.SockFilter {
		return unix.SockFilter{Code: bpfRetK, K: seccompRetErrno | uint32(syscall.EACCES)}
	}
	// Jumps to "deny" are fixed up once the program's length is known.
	var p []unix.SockFilter
	var toDeny []int
	jumpDenyIf := func(code uint16, k uint32) {
		toDeny = append(toDeny, len(p))
		p = append(p, unix.SockFilter{Code: code, K: k})
	}
	p = append(p,
		unix.SockFilter{Code: bpfLdAbsW, K: offArch},
		unix.SockFilter{Code: bpfJeqK, Jt: 1, K: auditArch()},
		deny(),
		unix.SockFilter{Code: bpfLdAbsW, K: offNr},
	)
	if runtime.GOARCH == "amd64" {
		jumpDenyIf(bpfJgeK, x32SyscallBit)
	}
	jumpDenyIf(bpfJeqK, unix.SYS_IO_URING_SETUP)
	// Not socket(2): allow (jump over the family checks to the allow).
	sockAt := len(p)
	p = append(p, unix.SockFilter{Code: bpfJeqK, K: unix.SYS_SOCKET})
	p = append(p, unix.SockFilter{Code: bpfLdAbsW, K: offArg0})
	if network {
		jumpDenyIf(bpfJeqK, unix.AF_UNIX)
	} else {
		// Any family but netlink: netlink (routes, addresses) reaches no
		// other machine and no other program's socket.
		p = append(p, unix.SockFilter{Code: bpfJeqK, Jt: 1, K: unix.AF_NETLINK})
		toDeny = append(toDeny, -1) // placeholder: the unconditional deny below
		p = append(p, deny())
	}
	allowAt := len(p)
	p = append(p, unix.SockFilter{Code: bpfRetK, K: seccompRetAllow})
	denyAt := len(p)
	p = append(p, deny())
	p[sockAt].Jf = uint8(allowAt - sockAt - 1)
	for _, i := range toDeny {
		if i >= 0 {
			p[i].Jt = uint8(denyAt - i - 1)
		}
	}
	return p
}

// restrictAndExec confines this thread and execs path from it: writes
// only inside rw and to /dev/null; without network no TCP (Landlock) and
// no socket but netlink (seccomp); never a Unix socket, a signal or ptrace
// outside. Best effort maps the Landlock rules onto the kernel's ABI;
// tools.Sandbox.Protections says what that leaves out.
//
// Only the calling thread is restricted (no_new_privs, the Landlock domain
// and the seccomp filter are each per thread), and it is the thread that
// execs: execve(2) keeps that thread alone, with its restrictions, and the
// Go runtime's other threads end with the old image. This is go-landlock's
// documented single-thread enforcement (Config.NewRulesetFD); it spares
// the helper the signalling of every thread that enforcing on the whole
// process costs. The thread stays locked: it is never handed back.
func restrictAndExec(rw []string, network bool, path string, argv, env []string) error {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if LandlockABI() > 0 {
		cfg := landlock.V11
		if network {
			cfg.HandledAccessNet = 0
		}
		fd, flags, err := cfg.BestEffort().NewRulesetFD(
			landlock.RODirs("/"),
			landlock.RWDirs(rw...).WithRefer(),
			landlock.RWFiles("/dev/null").IgnoreIfMissing(),
		)
		if err != nil {
			return err
		}
		if fd >= 0 {
			err = llsys.LandlockRestrictSelf(fd, flags)
			unix.Close(fd)
			if err != nil {
				return err
			}
		}
	}
	if SeccompAvailable() {
		if err := installFilter(network); err != nil {
			return err
		}
	}
	return syscall.Exec(path, argv, env)
}

// installFilter installs filterProgram on the calling thread (no TSYNC:
// the thread that execs is the one that matters, see restrictAndExec).
func installFilter(network bool) error {
	prog := filterProgram(network)
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return errno
	}
	return nil
}
