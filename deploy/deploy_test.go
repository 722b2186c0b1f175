// Package deploy_test runs the study deployments of deploy/slurm and
// deploy/kubernetes as far as this machine allows: the Slurm job array
// and its merge job on a real one-node Slurm cluster started by the test,
// and the Kubernetes Jobs' own shell commands, decoded strictly from the
// manifest into the Kubernetes API types, run here in place of pods. Both
// compare the merged study with the same study run on one machine.
package deploy_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p4rcm/p4rcm/internal/race"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// studyArgs is a small study: two loads, two seeds, two schemes on the
// default preset cut to 100 us of arrivals; 8 runs of a fraction of a
// second each.
var studyArgs = []string{"--preset", "default", "--set", "workload.duration=100us", "--seeds", "2",
	"--schemes", "dcqcn,pfc", "--vary", "workload.load=0.3,0.6"}

// buildP4ctl builds p4ctl into dir for the deployments to run.
func buildP4ctl(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "p4ctl")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/p4rcm/p4rcm/cmd/p4ctl").CombinedOutput()
	if err != nil {
		t.Fatalf("go build p4ctl: %v\n%s", err, out)
	}
	return bin
}

// oneMachine runs the study on this machine, whole, into dir/whole.
func oneMachine(t *testing.T, p4ctl, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "whole")
	args := append([]string{"experiment"}, studyArgs...)
	if b, err := exec.Command(p4ctl, append(args, "-q", "-o", out)...).CombinedOutput(); err != nil {
		t.Fatalf("p4ctl %v: %v\n%s", args, err, b)
	}
	return out
}

// wallTimes matches what may differ between two executions of a study.
var wallTimes = regexp.MustCompile(`"wall_seconds": [0-9.e+-]+|runs in [0-9.]+ s|<td>[0-9]+\.[0-9]{2}</td><td class="name">ok`)

// sameStudy compares two studies' directories file by file, wall times
// aside.
func sameStudy(t *testing.T, want, got string) {
	t.Helper()
	read := func(root string) map[string][]byte {
		files := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			data, err := os.ReadFile(p)
			files[rel] = wallTimes.ReplaceAll(data, nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	a, b := read(want), read(got)
	if len(a) < 40 || len(a) != len(b) {
		t.Errorf("%d files on one machine, %d merged", len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between one machine and the merge", name)
		}
	}
}

// TestKubernetesManifest decodes study.yaml strictly into the Kubernetes
// API types, checks that the Indexed Job's index reaches --shard and that
// its count of shards is the Job's completions, then runs each pod's
// command here (JOB_COMPLETION_INDEX set as Kubernetes sets it, the
// volume a directory) and the merge Job's, and compares the result with
// the study run on one machine. No cluster is reachable here: what a
// cluster adds (scheduling, the shared volume, the image) is not tested.
func TestKubernetesManifest(t *testing.T) {
	race.SkipLong(t)
	data, err := os.ReadFile("kubernetes/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var shards, merge *batchv1.Job
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		switch meta.Kind {
		case "Job":
			var j batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &j); err != nil {
				t.Fatalf("document %d: %v", i, err)
			}
			if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
				shards = &j
			} else {
				merge = &j
			}
		case "PersistentVolumeClaim":
			var c corev1.PersistentVolumeClaim
			if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
				t.Fatalf("document %d: %v", i, err)
			}
		default:
			t.Fatalf("document %d: kind %q", i, meta.Kind)
		}
	}
	if shards == nil || merge == nil {
		t.Fatal("want an Indexed Job of shards and a Job that merges them")
	}
	env := func(c corev1.Container, name string) string {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
		return ""
	}
	pod := shards.Spec.Template.Spec
	n, err := strconv.Atoi(env(pod.Containers[0], "SHARDS"))
	if err != nil || shards.Spec.Completions == nil || int(*shards.Spec.Completions) != n ||
		env(merge.Spec.Template.Spec.InitContainers[0], "SHARDS") != strconv.Itoa(n) {
		t.Fatalf("SHARDS %q, completions %v, the merge waits for %q: they must agree", env(pod.Containers[0], "SHARDS"),
			shards.Spec.Completions, env(merge.Spec.Template.Spec.InitContainers[0], "SHARDS"))
	}

	dir := t.TempDir()
	bin := buildP4ctl(t, dir)
	volume := filepath.Join(dir, "volume")
	if err := os.MkdirAll(volume, 0o755); err != nil {
		t.Fatal(err)
	}
	// run runs a container's command as its pod would, with the volume at
	// its mount path replaced by a directory here.
	run := func(c corev1.Container, extra ...string) {
		t.Helper()
		mount := c.VolumeMounts[0].MountPath
		argv := append(append([]string(nil), c.Command...), c.Args...)
		for i := range argv {
			argv[i] = strings.ReplaceAll(argv[i], mount, volume)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
		for _, e := range c.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		cmd.Env = append(cmd.Env, extra...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", c.Name, argv, err, out)
		}
	}
	small := "STUDY_ARGS=" + strings.Join(studyArgs, " ")
	for i := range n {
		// What Kubernetes sets in each pod of an Indexed Job.
		run(pod.Containers[0], small, fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		if _, err := os.Stat(filepath.Join(volume, "parts", strconv.Itoa(i), "shard.json")); err != nil {
			t.Fatalf("pod %d wrote no shard: %v", i, err)
		}
		shard, err := os.ReadFile(filepath.Join(volume, "parts", strconv.Itoa(i), "shard.json"))
		if err != nil || !strings.Contains(string(shard), fmt.Sprintf(`"index": %d,`+"\n"+`    "count": %d`, i, n)) {
			t.Fatalf("pod %d's shard is not shard %d/%d: %s", i, i, n, shard)
		}
	}
	run(merge.Spec.Template.Spec.InitContainers[0])
	run(merge.Spec.Template.Spec.Containers[0])
	sameStudy(t, oneMachine(t, bin, dir), filepath.Join(volume, "study"))
}

// TestSlurmStudy starts a one-node Slurm cluster on this machine (munged,
// slurmctld and slurmd, with a key, sockets, ports and state of its own,
// stopped after), submits the study with deploy/slurm/submit.sh, waits for
// the job array and the merge job, and compares the merged study with the
// study run on one machine.
func TestSlurmStudy(t *testing.T) {
	race.SkipLong(t)
	if os.Geteuid() != 0 {
		t.Skip("Slurm's test cluster needs root (slurmd launches jobs as their user)")
	}
	for _, cmd := range []string{"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("%s not installed (Debian: apt-get install slurm-wlm munge; .ci/run installs them)", cmd)
		}
	}
	mungeUser, err := user.Lookup("munge")
	if err != nil {
		t.Skipf("no munge user (Debian's munge package makes it): %v", err)
	}
	dir := t.TempDir()
	conf := startSlurm(t, dir, mungeUser)
	bin := buildP4ctl(t, dir)
	study := filepath.Join(dir, "study")
	script, err := filepath.Abs("slurm/submit.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, append([]string{"-n", "3", "-d", study, "-p", bin, "--"}, studyArgs...)...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, out)
	}
	ids := strings.Fields(string(out))
	if len(ids) != 2 {
		t.Fatalf("submit.sh printed %q, want the array's and the merge's job IDs", out)
	}
	state := waitJob(t, conf, ids[1], 3*time.Minute)
	if state != "COMPLETED" {
		logs, _ := filepath.Glob(filepath.Join(study, "*.out"))
		var text strings.Builder
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			fmt.Fprintf(&text, "--- %s\n%s", l, b)
		}
		t.Fatalf("the merge job ended %s\n%s", state, text.String())
	}
	for i := range 3 {
		if _, err := os.Stat(filepath.Join(study, "parts", strconv.Itoa(i), "shard.json")); err != nil {
			t.Errorf("array task %d: %v", i, err)
		}
	}
	sameStudy(t, oneMachine(t, bin, dir), filepath.Join(study, "study"))
}

// startSlurm starts munged, slurmctld and slurmd in dir and returns the
// path of their slurm.conf; they are stopped, by PID, when the test ends.
func startSlurm(t *testing.T, dir string, munge *user.User) string {
	t.Helper()
	// munged checks that its socket's directories are searchable by all.
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(munge.Uid)
	gid, _ := strconv.Atoi(munge.Gid)
	keyDir, sockDir := filepath.Join(dir, "munge-key"), filepath.Join(dir, "munge-sock")
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{keyDir, 0o700}, {sockDir, 0o755}} {
		if err := os.Mkdir(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d.path, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(keyDir, "munge.key")
	if err := os.WriteFile(keyFile, key, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(keyFile, uid, gid); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(sockDir, "munge.sock")
	start(t, dir, "munged", &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
		"munged", "-F", "--socket="+socket, "--key-file="+keyFile, "--pid-file="+filepath.Join(sockDir, "munged.pid"),
		"--log-file="+filepath.Join(keyDir, "munged.log"), "--seed-file="+filepath.Join(keyDir, "munged.seed"))
	waitFor(t, "munged's socket", 10*time.Second, func() bool { _, err := os.Stat(socket); return err == nil })

	ctld, slurmd := freePort(t), freePort(t)
	for _, d := range []string{"state", "spool", "log"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=p4rcmtest
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=%[3]s
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MinJobAge=600
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
SlurmctldLogFile=%[4]s/log/slurmctld.log
SlurmdLogFile=%[4]s/log/slurmd.log
NodeName=localhost CPUs=%[5]d State=UNKNOWN
PartitionName=p4rcm Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`, ctld, slurmd, socket, dir, runtime.NumCPU())
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, dir, "slurmctld", nil, "slurmctld", "-D", "-f", conf)
	start(t, dir, "slurmd", nil, "slurmd", "-D", "-N", "localhost", "-f", conf)
	waitFor(t, "the node to be idle", 30*time.Second, func() bool {
		cmd := exec.Command("sinfo", "-h", "-o", "%T")
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		out, err := cmd.Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	})
	return conf
}

// start starts a daemon in the foreground, its output in dir/name.out,
// and stops it by PID when the test ends.
func start(t *testing.T, dir, name string, cred *syscall.Credential, argv ...string) {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			t.Logf("%s's output:\n%s", name, b)
		}
	})
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !ok(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s", limit, what)
		}
	}
}

// waitJob waits for a job to end and returns its state.
func waitJob(t *testing.T, conf, id string, limit time.Duration) string {
	t.Helper()
	state := regexp.MustCompile(`JobState=(\S+)`)
	var last string
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(time.Second) {
		cmd := exec.Command("scontrol", "show", "job", id)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		out, err := cmd.Output()
		if err != nil {
			continue
		}
		if m := state.FindSubmatch(out); m != nil {
			last = string(m[1])
			switch last {
			case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED":
				continue
			}
			return last
		}
	}
	t.Fatalf("job %s still %s after %v", id, last, limit)
	return ""
}
