// Package deploy_test runs the study deployments of deploy/slurm and
// deploy/kubernetes as far as this machine allows: the Slurm job array
// and its merge job on a real one-node Slurm cluster started by the test,
// and the Kubernetes Jobs' own shell commands, decoded strictly from the
// manifest into the Kubernetes API types, run here in place of pods. Both
// compare the merged study with the same study run on one machine.
package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// manifest is study.yaml decoded: its ConfigMaps' data by name, its
// volume claim, the Indexed Job of shards and the Job that merges them.
type manifest struct {
	config        map[string]map[string]string
	claim         *corev1.PersistentVolumeClaim
	shards, merge *batchv1.Job
}

// readManifest decodes study.yaml strictly into the Kubernetes API types:
// an unknown or misplaced field fails it.
func readManifest(t *testing.T) manifest {
	t.Helper()
	data, err := os.ReadFile("kubernetes/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := manifest{config: map[string]map[string]string{}}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var into any
		switch meta.Kind {
		case "Job":
			into = new(batchv1.Job)
		case "ConfigMap":
			into = new(corev1.ConfigMap)
		case "PersistentVolumeClaim":
			into = new(corev1.PersistentVolumeClaim)
		default:
			t.Fatalf("document %d: kind %q", i, meta.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		switch v := into.(type) {
		case *batchv1.Job:
			if v.Spec.CompletionMode != nil && *v.Spec.CompletionMode == batchv1.IndexedCompletion {
				m.shards = v
			} else {
				m.merge = v
			}
		case *corev1.ConfigMap:
			m.config[v.Name] = v.Data
		case *corev1.PersistentVolumeClaim:
			m.claim = v
		}
	}
	if m.shards == nil || m.merge == nil || m.claim == nil {
		t.Fatal("want a volume claim, an Indexed Job of shards and a Job that merges them")
	}
	return m
}

// env is what a container of the manifest finds in its environment, from
// its ConfigMaps and its own values; values from the pod's fields are
// left to the caller.
func (m manifest) env(t *testing.T, c corev1.Container) []string {
	t.Helper()
	var env []string
	for _, from := range c.EnvFrom {
		data, ok := m.config[from.ConfigMapRef.Name]
		if !ok {
			t.Fatalf("container %s: no ConfigMap %q", c.Name, from.ConfigMapRef.Name)
		}
		for k, v := range data {
			env = append(env, k+"="+v)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// TestKubernetesManifest checks what study.yaml asks of a cluster (the
// storage class, an image pull policy a locally built image passes, the
// counts of shards and tries in agreement), then runs each pod's command
// here (JOB_COMPLETION_INDEX set as Kubernetes sets it, the volume a
// directory, the ConfigMaps' files and values as the pods get them) and
// the merge Job's, on a volume where another study's shards already lie,
// and compares the result with the study run on one machine. Then a
// shard that fails on its last try: the merge must give up and name it.
// No cluster is reachable here: what a cluster adds (scheduling, the
// shared volume, the image) is not tested.
func TestKubernetesManifest(t *testing.T) {
	race.SkipLong(t)
	m := readManifest(t)
	if c := m.claim.Spec.StorageClassName; c == nil || *c == "" {
		t.Error("the volume claim names no storage class")
	}
	settings := m.config["p4rcm-study"]
	n, err := strconv.Atoi(settings["SHARDS"])
	if err != nil || m.shards.Spec.Completions == nil || int(*m.shards.Spec.Completions) != n ||
		m.shards.Spec.Parallelism == nil || int(*m.shards.Spec.Parallelism) != n {
		t.Fatalf("SHARDS %q, completions %v, parallelism %v: they must agree", settings["SHARDS"],
			m.shards.Spec.Completions, m.shards.Spec.Parallelism)
	}
	if r := m.shards.Spec.BackoffLimitPerIndex; r == nil || strconv.Itoa(int(*r)) != settings["RETRIES"] {
		t.Errorf("RETRIES %q, backoffLimitPerIndex %v: they must agree", settings["RETRIES"], r)
	}
	if b := m.merge.Spec.BackoffLimit; b == nil || *b != 0 {
		t.Errorf("the merge Job's backoffLimit is %v: a merge whose shard failed for good must not wait again", b)
	}
	shardPod, mergePod := m.shards.Spec.Template.Spec, m.merge.Spec.Template.Spec
	for _, c := range []corev1.Container{shardPod.Containers[0], mergePod.InitContainers[0], mergePod.Containers[0]} {
		if c.ImagePullPolicy != corev1.PullIfNotPresent || strings.HasSuffix(c.Image, ":latest") {
			t.Errorf("container %s: image %s, pull policy %q: a locally built image needs IfNotPresent and a tag other than latest",
				c.Name, c.Image, c.ImagePullPolicy)
		}
	}

	dir := t.TempDir()
	bin := buildP4ctl(t, dir)
	volume := filepath.Join(dir, "volume")
	scripts := filepath.Join(dir, "scripts")
	for _, d := range []string{volume, scripts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The mounts of a pod, as directories here.
	mounts := map[string]string{"study": volume, "scripts": scripts}
	local := func(c corev1.Container, s string) string {
		for _, v := range c.VolumeMounts {
			s = strings.ReplaceAll(s, v.MountPath, mounts[v.Name])
		}
		return s
	}
	for _, c := range []corev1.Container{shardPod.Containers[0], mergePod.Containers[0]} {
		for _, v := range c.VolumeMounts {
			if mounts[v.Name] == "" {
				t.Fatalf("container %s: a volume %q this test does not know", c.Name, v.Name)
			}
		}
	}
	for name, text := range m.config["p4rcm-study-script"] {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(local(shardPod.Containers[0], text)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// run runs a container's command as its pod would, with the PATH's
	// p4ctl from path, and returns its output and whether it succeeded.
	run := func(c corev1.Container, path string, extra ...string) (string, bool) {
		t.Helper()
		argv := append(append([]string(nil), c.Command...), c.Args...)
		for i := range argv {
			argv[i] = local(c, argv[i])
		}
		// A wait that waits for ever fails.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "PATH="+path+":"+os.Getenv("PATH"))
		cmd.Env = append(append(cmd.Env, m.env(t, c)...), extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err == nil
	}
	mustRun := func(c corev1.Container, extra ...string) {
		t.Helper()
		if out, ok := run(c, dir, extra...); !ok {
			t.Fatalf("%s %v: failed\n%s", c.Name, extra, out)
		}
	}
	// What Kubernetes sets in each pod of an Indexed Job.
	index := func(i int) string { return fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i) }

	// Another study's shards, left on the volume.
	other := "STUDY_ARGS=" + strings.Join(append(append([]string(nil), studyArgs...), "--seeds", "1"), " ")
	for i := range n {
		mustRun(shardPod.Containers[0], other, index(i))
	}
	small := "STUDY_ARGS=" + strings.Join(studyArgs, " ")
	for i := range n {
		mustRun(shardPod.Containers[0], small, index(i))
	}
	mustRun(mergePod.InitContainers[0], small)
	mustRun(mergePod.Containers[0], small)
	studies, _ := filepath.Glob(filepath.Join(volume, "studies", "*", "study"))
	if len(studies) != 1 {
		t.Fatalf("merged studies on the volume: %v, want this one only", studies)
	}
	sameStudy(t, oneMachine(t, bin, dir), studies[0])

	// A shard that fails: on a try with more to come it leaves nothing
	// for the merge, on its last the merge gives up and says which.
	failing := filepath.Join(dir, "failing")
	if err := os.Mkdir(failing, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\ncase \"$*\" in *--shard*) echo no room >&2; exit 3;; esac\nexec " + bin + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(failing, "p4ctl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	broken := "STUDY_ARGS=" + strings.Join(append(append([]string(nil), studyArgs...), "--seeds", "3"), " ")
	for i := range n {
		if i == 1 {
			continue
		}
		mustRun(shardPod.Containers[0], broken, index(i))
	}
	retries, _ := strconv.Atoi(settings["RETRIES"])
	for _, failures := range []int{retries - 1, retries} {
		last := failures == retries
		if _, ok := run(shardPod.Containers[0], failing, broken, index(1), fmt.Sprintf("INDEX_FAILURES=%d", failures)); ok {
			t.Fatal("the shard whose p4ctl failed succeeded")
		}
		marks, _ := filepath.Glob(filepath.Join(volume, "studies", "*", "failed", "*"))
		if len(marks) != map[bool]int{false: 0, true: 1}[last] {
			t.Fatalf("after try %d of %d: failure marks %v", failures+1, retries+1, marks)
		}
	}
	out, ok := run(mergePod.InitContainers[0], dir, broken)
	if ok || !strings.Contains(out, "shard 1 of study") || !strings.Contains(out, "failed for good: p4ctl exited 3") {
		t.Errorf("the merge's wait with shard 1 failed for good: succeeded %v, said %q", ok, out)
	}
}

// TestSlurmStudy starts a one-node Slurm cluster on this machine with
// slurm/cluster.sh (munged, slurmctld and slurmd, with a key, sockets,
// ports and state of their own, stopped after), submits the study with deploy/slurm/submit.sh, waits for
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
	if _, err := user.Lookup("munge"); err != nil {
		t.Skipf("no munge user (Debian's munge package makes it): %v", err)
	}
	dir := t.TempDir()
	conf := startSlurm(t, dir)
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

// startSlurm starts a one-node cluster in dir with slurm/cluster.sh, the
// script users try the recipe with, and returns the path of its
// slurm.conf; the script stops it, by PID, when the test ends.
func startSlurm(t *testing.T, dir string) string {
	t.Helper()
	// munged checks that its socket's directories are searchable by all.
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("slurm/cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	cluster := filepath.Join(dir, "cluster")
	t.Cleanup(func() {
		if out, err := exec.Command(script, "stop", cluster).CombinedOutput(); err != nil {
			t.Errorf("cluster.sh stop: %v\n%s", err, out)
		}
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(cluster, "log", "*"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
		}
	})
	out, err := exec.Command(script, "start", cluster).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster.sh start: %v\n%s", err, out)
	}
	conf := filepath.Join(cluster, "slurm.conf")
	if want := "export SLURM_CONF=" + conf; strings.TrimSpace(string(out)) != want {
		t.Fatalf("cluster.sh start printed %q, want %q", out, want)
	}
	return conf
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
