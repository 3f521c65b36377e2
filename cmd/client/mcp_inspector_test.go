package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// teammemTools are the tools both MCP servers offer, sorted.
var teammemTools = []string{"create", "delete", "insert", "recent", "rename", "search", "str_replace", "view"}

// TestMCPInspector drives teammem's two MCP servers with a real
// third-party client, the CLI of the MCP Inspector (2.12.0, installed by
// scripts/test and named by TEAMMEM_MCP_INSPECTOR): `teammem mcp` over
// stdio, and the server's /mcp over Streamable HTTP. On each it lists the
// tools, creates a file and views it, and checks that the file is on the
// server; over stdio also that it is in the local memory directory. A
// wrong key fails with a non-zero exit and the server's reason.
//
// As root the test re-runs itself in a network namespace that has nothing
// but lo: the Inspector reaches teammem on loopback and nothing else.
func TestMCPInspector(t *testing.T) {
	bin := os.Getenv("TEAMMEM_MCP_INSPECTOR")
	if bin == "" {
		if ci() {
			t.Fatal("TEAMMEM_MCP_INSPECTOR is not set under CI; scripts/test installs the MCP Inspector 2.12.0 and sets it")
		}
		t.Skip("MCP Inspector not installed: run scripts/test, which installs it and sets TEAMMEM_MCP_INSPECTOR")
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("TEAMMEM_MCP_INSPECTOR=%s is not an executable file (%v)", bin, err)
	}
	if loopbackOnly(t) {
		return
	}
	srv := startServer(t)
	const remote = "git@github.com:acme/widgets.git"

	t.Run("stdio", func(t *testing.T) {
		m := newMachine(t, srv, remote)
		mem := m.memDir()
		// `teammem mcp` keeps an existing memory directory current.
		if err := os.MkdirAll(mem, 0o755); err != nil {
			t.Fatal(err)
		}
		// The Inspector gives a stdio server only a default environment
		// (HOME, PATH…) and what -e adds.
		stdio := func(key string, args ...string) (string, string, int) {
			t.Helper()
			cli := []string{"--cwd", m.repo}
			for _, kv := range []string{"HOME=" + m.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(m.home, ".claude"),
				"XDG_CONFIG_HOME=" + filepath.Join(m.home, ".config"), "TEAMMEM_SERVER=" + srv, "TEAMMEM_API_KEY=" + key} {
				cli = append(cli, "-e", kv)
			}
			cli = append(append(cli, args...), "--", clientBin, "mcp")
			return inspect(t, bin, m, cli...)
		}
		out, errOut, code := stdio(serverKey, "--method", "tools/list")
		wantTools(t, out, errOut, code)

		const text = "# From the Inspector\nover stdio\n"
		out, errOut, code = stdio(serverKey, "--method", "tools/call", "--tool-name", "create",
			"--tool-arg", "path=/memories/team/x.md", "--tool-arg", "file_text="+text)
		wantText(t, "create", out, errOut, code, "File created successfully at: /memories/team/x.md")
		// Pulled into the local memory directory after the write.
		waitFile(t, mem, "team/x.md", text, 30*time.Second)
		// On the server: another machine pulls it.
		other := newMachine(t, srv, remote)
		other.must("sync")
		if got := read(t, other.memDir(), "team/x.md"); got != text {
			t.Fatalf("another machine pulled %q, want %q", got, text)
		}
		out, errOut, code = stdio(serverKey, "--method", "tools/call", "--tool-name", "view", "--tool-arg", "path=/memories/team/x.md")
		wantText(t, "view", out, errOut, code, "     1\t# From the Inspector\n     2\tover stdio")

		const wrong = "wrong-key-0123456789abcdefghijklmnopqrstu"
		out, errOut, code = stdio(wrong, "--method", "tools/list")
		wantRefused(t, out, errOut, code, wrong)
	})

	t.Run("http", func(t *testing.T) {
		m := newMachine(t, srv, remote)
		// --stored-auth-only: a 401 fails at once instead of starting the
		// Inspector's interactive OAuth.
		overHTTP := func(key string, args ...string) (string, string, int) {
			t.Helper()
			cli := append([]string{srv + "/mcp?repo=acme/widgets", "--transport", "http",
				"--header", "Authorization: Bearer " + key, "--stored-auth-only"}, args...)
			return inspect(t, bin, m, cli...)
		}
		out, errOut, code := overHTTP(serverKey, "--method", "tools/list")
		wantTools(t, out, errOut, code)

		const text = "# From the Inspector\nover HTTP\n"
		out, errOut, code = overHTTP(serverKey, "--method", "tools/call", "--tool-name", "create",
			"--tool-arg", "path=/memories/team/h.md", "--tool-arg", "file_text="+text)
		wantText(t, "create", out, errOut, code, "File created successfully at: /memories/team/h.md")
		m.must("sync")
		if got := read(t, m.memDir(), "team/h.md"); got != text {
			t.Fatalf("a machine pulled %q, want %q", got, text)
		}
		out, errOut, code = overHTTP(serverKey, "--method", "tools/call", "--tool-name", "view", "--tool-arg", "path=/memories/team/h.md")
		wantText(t, "view", out, errOut, code, "     1\t# From the Inspector\n     2\tover HTTP")

		const wrong = "wrong-key-0123456789abcdefghijklmnopqrstu"
		out, errOut, code = overHTTP(wrong, "--method", "tools/list")
		wantRefused(t, out, errOut, code, wrong)
	})
}

// inspect runs the Inspector's CLI with args, the machine's environment
// (its HOME, where the Inspector keeps its state) and a deadline that kills
// its process group, and returns stdout, stderr and the exit code.
func inspect(t *testing.T, bin string, m *machine, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--cli", "--format", "json"}, args...)...)
	cmd.Dir = m.repo
	cmd.Env = m.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// wantTools checks a tools/list answer names exactly teammem's tools.
func wantTools(t *testing.T, out, errOut string, code int) {
	t.Helper()
	var res struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("tools/list: exit %d\n%s%s", code, out, errOut)
	}
	var names []string
	for _, tl := range res.Result.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, teammemTools) {
		t.Fatalf("tools/list named %v, want %v", names, teammemTools)
	}
}

// wantText checks a tools/call answer is a success whose text has want.
func wantText(t *testing.T, what, out, errOut string, code int, want string) {
	t.Helper()
	var res struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Result.IsError || len(res.Result.Content) != 1 {
		t.Fatalf("%s: exit %d\n%s%s", what, code, out, errOut)
	}
	if got := res.Result.Content[0].Text; !strings.Contains(got, want) {
		t.Fatalf("%s answered %q, want it to contain %q", what, got, want)
	}
}

// wantRefused checks a call with a wrong key failed with the server's
// reason, and that no output shows the key.
func wantRefused(t *testing.T, out, errOut string, code int, key string) {
	t.Helper()
	if code == 0 {
		t.Fatalf("a wrong key exited 0:\n%s%s", out, errOut)
	}
	contains(t, out+errOut, "the API key is not valid")
	if strings.Contains(out+errOut, key) {
		t.Fatalf("the output shows the key:\n%s%s", out, errOut)
	}
}
