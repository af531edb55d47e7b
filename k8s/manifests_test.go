package k8s_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	sigsjson "sigs.k8s.io/json"
)

// kustomizations are the directories the test builds; each must come out
// valid. Only the overlays are meant to be applied as they are.
var kustomizations = []string{"base", "overlays/example", "overlays/servicemonitor"}

// stopGraceSeconds is the --drain-timeout the Deployment gives (and
// cmd/scand's defaultDrainTimeout): how long a stop waits for running
// streams. Kept in step by hand: package main cannot be imported;
// TestDrainTimeoutArg checks the args say the same.
const stopGraceSeconds = 25

// graceMargin is what the termination grace period must leave, beyond the
// preStop hook and stopGrace, for the process to exit before SIGKILL.
const graceMargin = 5

// memoryLimitSlack is cmd/scand's memoryLimitSlack (serve.go): GOMEMLIMIT
// defaults to --io-memory plus this.
const memoryLimitSlack = 64 << 20

// fileFlags are serve's flags that name a file the pod must mount.
var fileFlags = []string{"tls-cert", "tls-key", "tls-client-ca", "identities", "jwt-jwks", "jwt-secret-file", "ticket-key-file", "peer-ca"}

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the
// overlay uses; strict decoding into it catches a misspelt field there too.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path,omitempty"`
			Interval string `json:"interval,omitempty"`
			Scheme   string `json:"scheme,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// kinds maps apiVersion/kind to a new object of its Go type. A kind not
// here fails the build: every object the manifests make is checked.
var kinds = map[string]func() any{
	"v1/Namespace":                            func() any { return new(corev1.Namespace) },
	"v1/ServiceAccount":                       func() any { return new(corev1.ServiceAccount) },
	"v1/ConfigMap":                            func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                               func() any { return new(corev1.Secret) },
	"v1/Service":                              func() any { return new(corev1.Service) },
	"apps/v1/Deployment":                      func() any { return new(appsv1.Deployment) },
	"autoscaling/v2/HorizontalPodAutoscaler":  func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"policy/v1/PodDisruptionBudget":           func() any { return new(policyv1.PodDisruptionBudget) },
	"networking.k8s.io/v1/NetworkPolicy":      func() any { return new(networkingv1.NetworkPolicy) },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return new(serviceMonitor) },
}

// objects is one kustomization's output, decoded.
type objects struct {
	dir  string
	all  []any
	yaml []byte // the whole output, for failure messages
}

// build runs kustomize on dir and decodes every object strictly.
func build(t *testing.T, dir string) objects {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := objects{dir: dir}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s: %v", dir, r.CurId(), err)
		}
		out.yaml = append(append(out.yaml, y...), "---\n"...)
		obj, err := decodeStrict(y)
		if err != nil {
			t.Fatalf("%s: %s: %v\n%s", dir, r.CurId(), err, y)
		}
		out.all = append(out.all, obj)
	}
	return out
}

// decodeStrict decodes one YAML object into the Go type of its kind. It
// refuses unknown fields, duplicate fields and fields in the wrong case
// (sigs.k8s.io/json matches case-sensitively, as the API server does;
// encoding/json would accept "Replicas").
func decodeStrict(y []byte) (any, error) {
	j, err := yaml.YAMLToJSONStrict(y) // duplicate keys are an error here: JSON decoding never sees them
	if err != nil {
		return nil, err
	}
	var tm metav1.TypeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &tm); err != nil {
		return nil, err
	}
	newObj, ok := kinds[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		return nil, fmt.Errorf("unexpected kind %s %s: add it to kinds with its Go type", tm.APIVersion, tm.Kind)
	}
	obj := newObj()
	strict, err := sigsjson.UnmarshalStrict(j, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("strict decoding: %v", strict)
	}
	return obj, nil
}

// only returns the single object of type T, failing unless there is
// exactly one.
func only[T any](t testing.TB, o objects) T {
	t.Helper()
	all := every[T](o)
	if len(all) != 1 {
		var zero T
		t.Fatalf("%s: want one %T, have %d", o.dir, zero, len(all))
	}
	return all[0]
}

func every[T any](o objects) []T {
	var out []T
	for _, obj := range o.all {
		if v, ok := obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestStrictDecodingRefuses proves the decoder is strict: a misspelt field,
// a field in the wrong case and a duplicate are errors, not ignored.
func TestStrictDecodingRefuses(t *testing.T) {
	for name, y := range map[string]string{
		"unknown":   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 3}\n",
		"case":      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {Replicas: 3}\n",
		"nested":    "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: 1, targetport: 2}]}\n",
		"kind":      "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n",
		"duplicate": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\ndata: {c: d}\n",
	} {
		if _, err := decodeStrict([]byte(y)); err == nil {
			t.Errorf("%s: decoded without error:\n%s", name, y)
		}
	}
	if _, err := decodeStrict([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 3}\n")); err != nil {
		t.Errorf("a valid Deployment: %v", err)
	}
}

func TestManifests(t *testing.T) {
	for _, dir := range kustomizations {
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			o := build(t, dir)
			checkAll(t, o, dir != "base")
			if t.Failed() {
				t.Logf("kustomize output of %s:\n%s", dir, o.yaml)
			}
		})
	}
}

// checkAll applies every rule to one build; overlay says it is meant to
// be applied (namespace, image and Secrets present).
func checkAll(t testing.TB, o objects, overlay bool) {
	d := only[*appsv1.Deployment](t, o)
	c := scandContainer(t, d)
	cfg := containerConfig(t, o, c)
	checkArgs(t, c)
	checkMembership(t, cfg)
	checkProbes(t, d, c, cfg)
	checkResources(t, c, cfg)
	checkSecurityContext(t, d, c)
	checkSpread(t, d)
	checkService(t, o, d)
	checkPDB(t, o, d)
	checkHPA(t, o, d)
	checkNetworkPolicy(t, o, d)
	checkServiceAccount(t, o, d)
	checkFiles(t, o, d, c, cfg, overlay)
	checkCache(t, d, c, cfg)
	if overlay {
		checkImage(t, c)
		ns := only[*corev1.Namespace](t, o)
		for _, obj := range o.all {
			if m, ok := obj.(metav1.Object); ok && m != metav1.Object(ns) && m.GetNamespace() != ns.Name {
				t.Errorf("%T %s is in namespace %q, not the overlay's %q", obj, m.GetName(), m.GetNamespace(), ns.Name)
			}
		}
	}
	if len(every[*serviceMonitor](o)) > 0 {
		checkServiceMonitor(t, o, d)
	}
}

// recorder is a testing.TB that records failures instead of failing, so
// a test can prove a rule rejects a bad manifest. Fatalf ends the checks
// (checkAll runs under run, which recovers).
type recorder struct {
	testing.TB // nil: only the methods below are called
	errs       []string
}

type fatal struct{}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(string, ...any)       {}
func (r *recorder) Failed() bool              { return len(r.errs) > 0 }
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); panic(fatal{}) }
func (r *recorder) run(f func(testing.TB)) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(fatal); !ok {
				panic(p)
			}
		}
	}()
	f(r)
}

// TestRulesReject breaks the example overlay's output one rule at a time
// and expects checkAll to say so: the rules are not vacuous.
func TestRulesReject(t *testing.T) {
	dep := func(o objects) *appsv1.Deployment { return only[*appsv1.Deployment](t, o) }
	ctr := func(o objects) *corev1.Container { return &dep(o).Spec.Template.Spec.Containers[0] }
	for name, c := range map[string]struct {
		want   string
		break_ func(objects)
	}{
		"no readiness":       {"want readiness", func(o objects) { ctr(o).ReadinessProbe = nil }},
		"readiness=liveness": {"same thing", func(o objects) { ctr(o).ReadinessProbe = ctr(o).LivenessProbe.DeepCopy() }},
		"kubelet grpc probe under TLS": {"plaintext", func(o objects) {
			ctr(o).ReadinessProbe.ProbeHandler = corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8815}}
		}},
		"short grace":     {"terminationGracePeriodSeconds", func(o objects) { g := int64(10); dep(o).Spec.Template.Spec.TerminationGracePeriodSeconds = &g }},
		"small memory":    {"memory limit", func(o objects) { setMemory(ctr(o), "1Gi") }},
		"writable root":   {"readOnlyRootFilesystem", func(o objects) { f := false; ctr(o).SecurityContext.ReadOnlyRootFilesystem = &f }},
		"capability kept": {"capabilities", func(o objects) { ctr(o).SecurityContext.Capabilities.Drop = nil }},
		"root":            {"uid 0", func(o objects) { u := int64(0); ctr(o).SecurityContext.RunAsUser = &u }},
		"no spread":       {"not spread", func(o objects) { dep(o).Spec.Template.Spec.TopologySpreadConstraints = nil }},
		"split flag":      {"--name=value", func(o objects) { ctr(o).Args = append(ctr(o).Args, "--plan-timeout", "1m") }},
		"no membership": {"membership", func(o objects) {
			ctr(o).Args = slices.DeleteFunc(ctr(o).Args, func(a string) bool { return strings.HasPrefix(a, "--peers-dns=") })
		}},
		"replicas":       {"replicas", func(o objects) { n := int32(3); dep(o).Spec.Replicas = &n }},
		"unmounted file": {"no mounted volume", func(o objects) { ctr(o).Args = append(ctr(o).Args, "--tls-client-ca=/etc/ca.pem") }},
		"missing key": {"has no key", func(o objects) {
			for _, s := range every[*corev1.Secret](o) {
				delete(s.StringData, "keys")
			}
		}},
		"cache volume too small": {"cache volume", func(o objects) {
			for i, v := range dep(o).Spec.Template.Spec.Volumes {
				if v.Name == "cache" {
					q := resource.MustParse("8Gi")
					dep(o).Spec.Template.Spec.Volumes[i].EmptyDir.SizeLimit = &q
				}
			}
		}},
		"cache not in ephemeral storage": {"ephemeral-storage", func(o objects) {
			ctr(o).Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("128Mi")
		}},
		"ClusterIP": {"headless", func(o objects) { only[*corev1.Service](t, o).Spec.ClusterIP = "" }},
		"latest":    {"latest", func(o objects) { ctr(o).Image = "scand:latest" }},
		"literal secret": {"literal secret", func(o objects) {
			ctr(o).Env = append(ctr(o).Env, corev1.EnvVar{Name: "SCAND_S3_SECRET_KEY", Value: "x"})
		}},
	} {
		o := build(t, "overlays/example")
		r := &recorder{}
		r.run(func(tb testing.TB) { checkAll(tb, o, true) })
		if len(r.errs) > 0 {
			t.Fatalf("the unbroken example fails: %v", r.errs)
		}
		c.break_(o)
		r.run(func(tb testing.TB) { checkAll(tb, o, true) })
		if !slices.ContainsFunc(r.errs, func(e string) bool { return strings.Contains(e, c.want) }) {
			t.Errorf("%s: want an error containing %q, have %q", name, c.want, r.errs)
		}
	}
}

func setMemory(c *corev1.Container, q string) {
	c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse(q)
	c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(q)
}

func scandContainer(t testing.TB, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "scand" {
		t.Fatalf("want one container named scand, have %d", len(cs))
	}
	return &cs[0]
}

// config is the container's `scand serve` configuration as the process
// sees it: the flags given in args and the environment.
type config struct {
	args []string          // after "serve"
	env  map[string]string // SCAND_* and the rest, from ConfigMaps and env
}

// flag returns the effective value of a flag: args win over SCAND_<FLAG>.
func (c config) flag(name string) (string, bool) {
	v, ok := "", false
	if e, found := c.env[envName(name)]; found {
		v, ok = e, true
	}
	for _, a := range c.args {
		if k, val, found := strings.Cut(strings.TrimPrefix(a, "--"), "="); found && k == name {
			v, ok = val, true
		} else if !found && k == name {
			v, ok = "true", true
		}
	}
	return v, ok
}

func envName(flag string) string {
	return "SCAND_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// containerConfig resolves the container's environment: envFrom ConfigMaps
// first, then env (which wins). Values from the downward API get stand-ins.
func containerConfig(t testing.TB, o objects, c *corev1.Container) config {
	t.Helper()
	cms := map[string]*corev1.ConfigMap{}
	for _, cm := range every[*corev1.ConfigMap](o) {
		cms[cm.Name] = cm
	}
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			t.Errorf("envFrom %+v: only ConfigMaps are expected (secrets go in files)", from)
			continue
		}
		cm, ok := cms[from.ConfigMapRef.Name]
		if !ok {
			t.Errorf("envFrom names ConfigMap %q, which the build does not make", from.ConfigMapRef.Name)
			continue
		}
		for k, v := range cm.Data {
			env[from.Prefix+k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil:
			env[e.Name] = map[string]string{"status.podIP": "127.0.0.1"}[e.ValueFrom.FieldRef.FieldPath]
			if env[e.Name] == "" {
				env[e.Name] = "test-" + e.ValueFrom.FieldRef.FieldPath
			}
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "test-secret"
		default:
			t.Errorf("env %s: only literal values, Secret keys and the downward API are expected", e.Name)
		}
		if e.ValueFrom == nil && secretName(e.Name) {
			t.Errorf("env %s: a literal secret in the manifest; use valueFrom.secretKeyRef", e.Name)
		}
	}
	for k := range env {
		if _, fromEnv := envValue(c, k); !fromEnv && secretName(k) {
			t.Errorf("%s comes from a ConfigMap: secrets belong in a Secret", k)
		}
	}
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("args %q: want serve first", c.Args)
	}
	return config{args: c.Args[1:], env: env}
}

// secretName reports whether an environment variable holds a credential.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	if strings.HasSuffix(n, "_FILE") { // a path, such as SCAND_JWT_SECRET_FILE
		return false
	}
	return strings.Contains(n, "SECRET") || strings.Contains(n, "ACCESS_KEY") || strings.Contains(n, "TOKEN") || strings.Contains(n, "PASSWORD")
}

// envValue returns the container's env entry named name, if any.
func envValue(c *corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

var argForm = regexp.MustCompile(`^--[a-z0-9][a-z0-9-]*(=.*)?$`)

// checkArgs requires --flag=value for every argument, so that a value can
// never be taken for a positional argument (which `scand serve <args>
// --help` would not catch) and the test reads flags unambiguously.
func checkArgs(t testing.TB, c *corev1.Container) {
	for _, a := range c.Args[1:] {
		if !argForm.MatchString(a) {
			t.Errorf("arg %q: write flags as --name=value", a)
		}
	}
	if len(c.Command) > 0 && c.Command[0] != "/usr/local/bin/scand" {
		t.Errorf("command %q: the image's entrypoint is /usr/local/bin/scand", c.Command)
	}
}

func port(t testing.TB, c *corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container has no port named %q", name)
	return 0
}

// listenPort is the port of a host:port flag value.
func listenPort(t testing.TB, cfg config, flag string) int32 {
	t.Helper()
	v, ok := cfg.flag(flag)
	if !ok {
		t.Fatalf("--%s is not set", flag)
	}
	_, p, found := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(v, "grpc://"), "grpc+tcp://"), ":")
	for found && strings.Contains(p, ":") { // [::]:8815
		_, p, found = strings.Cut(p, ":")
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		t.Fatalf("--%s=%s: no port", flag, v)
	}
	return int32(n)
}

func checkProbes(t testing.TB, d *appsv1.Deployment, c *corev1.Container, cfg config) {
	grpcPort := port(t, c, "grpc")
	if p := listenPort(t, cfg, "listen"); p != grpcPort {
		t.Errorf("--listen port %d is not the grpc containerPort %d", p, grpcPort)
	}
	tlsCert, _ := cfg.flag("tls-cert")
	r, l, s := c.ReadinessProbe, c.LivenessProbe, c.StartupProbe
	if r == nil || l == nil || s == nil {
		t.Fatalf("want readiness, liveness and startup probes; have %v, %v, %v", r != nil, l != nil, s != nil)
	}
	if reflect.DeepEqual(r.ProbeHandler, l.ProbeHandler) {
		t.Errorf("readiness and liveness probe the same thing: a draining replica (NOT_SERVING) would be killed")
	}
	if reflect.DeepEqual(*r, *l) || reflect.DeepEqual(*r, *s) || reflect.DeepEqual(*l, *s) {
		t.Errorf("two probes are identical")
	}
	// Readiness and startup ask gRPC health on the Flight port.
	for name, p := range map[string]*corev1.Probe{"readiness": r, "startup": s} {
		checkHealthProbe(t, name, p, grpcPort, tlsCert != "")
	}
	// Liveness: the metrics server answers, or gRPC health.
	switch {
	case l.HTTPGet != nil:
		mp := listenPort(t, cfg, "metrics-listen")
		if l.HTTPGet.Path != "/metrics" || (l.HTTPGet.Port.String() != "metrics" && l.HTTPGet.Port.IntValue() != int(mp)) {
			t.Errorf("liveness httpGet %s on port %s: want /metrics on the metrics port", l.HTTPGet.Path, l.HTTPGet.Port.String())
		}
		if port(t, c, "metrics") != mp {
			t.Errorf("--metrics-listen port %d is not the metrics containerPort %d", mp, port(t, c, "metrics"))
		}
		if l.HTTPGet.Scheme == corev1.URISchemeHTTPS {
			t.Errorf("liveness over HTTPS: the metrics server is plain HTTP")
		}
	case l.TCPSocket != nil, l.GRPC != nil && tlsCert == "", l.Exec != nil:
	default:
		t.Errorf("liveness %+v: want httpGet /metrics, tcpSocket, or gRPC health", l.ProbeHandler)
	}
	if s.PeriodSeconds*s.FailureThreshold < 10 {
		t.Errorf("startup probe allows %d s to start: too short", s.PeriodSeconds*s.FailureThreshold)
	}
	for name, p := range map[string]*corev1.Probe{"readiness": r, "liveness": l, "startup": s} {
		if p.TimeoutSeconds < 2 {
			t.Errorf("%s probe timeout %d s: a loaded replica needs more than 1 s", name, p.TimeoutSeconds)
		}
	}
	// The stop: preStop, then SIGTERM and scand's stopGrace, then a margin.
	var preStop int64
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		switch h := c.Lifecycle.PreStop; {
		case h.Sleep != nil:
			preStop = h.Sleep.Seconds
		default:
			t.Errorf("preStop %+v: the image has no shell; want sleep", h)
		}
	}
	g := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if g == nil || *g < preStop+stopGraceSeconds+graceMargin {
		t.Errorf("terminationGracePeriodSeconds %v: want at least preStop %d + stopGrace %d + %d", g, preStop, stopGraceSeconds, graceMargin)
	}
	if g != nil && *g > preStop+stopGraceSeconds+4*graceMargin {
		t.Errorf("terminationGracePeriodSeconds %d: far beyond what a stop takes; a stuck pod holds its node's slot that long", *g)
	}
}

// checkHealthProbe requires a probe of grpc.health.v1 on port: the
// kubelet's grpc probe when scand serves plaintext, grpc_health_probe with
// -tls when it serves TLS.
func checkHealthProbe(t testing.TB, name string, p *corev1.Probe, grpcPort int32, tls bool) {
	switch {
	case p.GRPC != nil:
		if tls && (p.GRPC.Mode == nil || *p.GRPC.Mode != corev1.GRPCProbeModeTLS) {
			t.Errorf("%s: the kubelet's grpc probe speaks plaintext and scand serves TLS", name)
		}
		if p.GRPC.Port != grpcPort {
			t.Errorf("%s: grpc probe on %d, scand listens on %d", name, p.GRPC.Port, grpcPort)
		}
	case p.Exec != nil:
		cmd := p.Exec.Command
		if len(cmd) == 0 || path.Base(cmd[0]) != "grpc_health_probe" {
			t.Fatalf("%s: exec %q: want grpc_health_probe", name, cmd)
		}
		if !slices.Contains(cmd, fmt.Sprintf("-addr=127.0.0.1:%d", grpcPort)) && !slices.Contains(cmd, fmt.Sprintf("-addr=localhost:%d", grpcPort)) {
			t.Errorf("%s: %q does not dial loopback port %d", name, cmd, grpcPort)
		}
		if tls != slices.Contains(cmd, "-tls") {
			t.Errorf("%s: %q: -tls must be there exactly when scand serves TLS (%v)", name, cmd, tls)
		}
		for _, a := range cmd {
			if strings.HasPrefix(a, "-service=") && a != "-service=" {
				t.Errorf("%s: %q: scand reports health on the empty service name only", name, cmd)
			}
		}
	default:
		t.Errorf("%s: %+v: want gRPC health", name, p.ProbeHandler)
	}
}

// checkResources derives the memory from --io-memory: the Go runtime's
// soft limit is --io-memory + 64MiB, and the container limit must leave
// at least a quarter on top, without being more than twice that.
func checkResources(t testing.TB, c *corev1.Container, cfg config) {
	req, lim := c.Resources.Requests, c.Resources.Limits
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := req[r]; !ok || q.IsZero() {
			t.Errorf("no %s request", r)
		}
	}
	memLim, ok := lim[corev1.ResourceMemory]
	if !ok {
		t.Fatalf("no memory limit")
	}
	if memReq := req[corev1.ResourceMemory]; memReq.Cmp(memLim) != 0 {
		t.Errorf("memory request %s != limit %s: scan memory should be reserved, not overcommitted", memReq.String(), memLim.String())
	}
	v, ok := cfg.flag("io-memory")
	if !ok {
		t.Fatalf("--io-memory is not set: the memory limit cannot be derived from a default that may change")
	}
	io, err := parseSize(v)
	if err != nil {
		t.Fatalf("--io-memory=%s: %v", v, err)
	}
	goLimit := io + memoryLimitSlack
	if gl, ok := cfg.flag("go-memory-limit"); ok {
		if goLimit, err = parseSize(gl); err != nil {
			t.Fatalf("--go-memory-limit=%s: %v", gl, err)
		}
	}
	if _, ok := cfg.env["GOMEMLIMIT"]; ok {
		t.Errorf("GOMEMLIMIT is set: scand derives it from --io-memory; set --go-memory-limit if needed")
	}
	if l := memLim.Value(); l < goLimit+goLimit/4 || l > 2*goLimit {
		t.Errorf("memory limit %s for a Go limit of %d MiB (--io-memory %s + 64MiB): want 1.25x to 2x of it", memLim.String(), goLimit>>20, v)
	}
}

// parseSize reads the sizes scand's flags take: a number with an
// optional binary (KiB, Ki, K) or decimal (KB) unit.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		return strconv.ParseInt(s, 10, 64)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	unit = strings.TrimSuffix(unit, "ib")
	unit = strings.TrimSuffix(unit, "i")
	q := s[:i] + map[string]string{"k": "Ki", "m": "Mi", "g": "Gi", "t": "Ti", "kb": "k", "mb": "M", "gb": "G", "tb": "T", "b": ""}[unit]
	r, err := resource.ParseQuantity(q)
	if err != nil {
		return 0, err
	}
	return r.Value(), nil
}

func checkSecurityContext(t testing.TB, d *appsv1.Deployment, c *corev1.Container) {
	pod := d.Spec.Template.Spec.SecurityContext
	sc := c.SecurityContext
	if sc == nil {
		t.Fatalf("container has no securityContext")
	}
	nonRoot := func(p *corev1.PodSecurityContext, c *corev1.SecurityContext) bool {
		if c.RunAsNonRoot != nil {
			return *c.RunAsNonRoot
		}
		return p != nil && p.RunAsNonRoot != nil && *p.RunAsNonRoot
	}
	if !nonRoot(pod, sc) {
		t.Errorf("runAsNonRoot is not true")
	}
	for _, uid := range []*int64{sc.RunAsUser, podUser(pod)} {
		if uid != nil && *uid == 0 {
			t.Errorf("runs as uid 0")
		}
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("allowPrivilegeEscalation is not false")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("privileged")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities %+v: want drop [ALL] and nothing added", sc.Capabilities)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil && pod != nil {
		seccomp = pod.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("seccompProfile %+v: want RuntimeDefault", seccomp)
	}
	if d.Spec.Template.Spec.HostNetwork || d.Spec.Template.Spec.HostPID || d.Spec.Template.Spec.HostIPC {
		t.Errorf("host namespaces shared")
	}
}

func podUser(p *corev1.PodSecurityContext) *int64 {
	if p == nil {
		return nil
	}
	return p.RunAsUser
}

// checkSpread requires the replicas spread over nodes and zones, by
// topology spread constraints or pod anti-affinity, selecting the pods
// themselves.
func checkSpread(t testing.TB, d *appsv1.Deployment) {
	podLabels := labels.Set(d.Spec.Template.Labels)
	keys := map[string]bool{}
	for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
		if selects(t, c.LabelSelector, podLabels) {
			keys[c.TopologyKey] = true
		}
	}
	if a := d.Spec.Template.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			if selects(t, w.PodAffinityTerm.LabelSelector, podLabels) {
				keys[w.PodAffinityTerm.TopologyKey] = true
			}
		}
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if selects(t, term.LabelSelector, podLabels) {
				keys[term.TopologyKey] = true
			}
		}
	}
	for _, k := range []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"} {
		if !keys[k] {
			t.Errorf("replicas are not spread over %s (topology spread or anti-affinity selecting the pods)", k)
		}
	}
}

func selects(t testing.TB, ls *metav1.LabelSelector, set labels.Set) bool {
	t.Helper()
	if ls == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		t.Errorf("selector %+v: %v", ls, err)
		return false
	}
	return !sel.Empty() && sel.Matches(set)
}

func checkService(t testing.TB, o objects, d *appsv1.Deployment) {
	svc := only[*corev1.Service](t, o)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service %s: clusterIP %q, want None (headless: gRPC clients balance calls, kube-proxy balances connections)", svc.Name, svc.Spec.ClusterIP)
	}
	if svc.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s publishes pods that are not ready: draining replicas would stay in DNS", svc.Name)
	}
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("Service %s selector %v does not select the pods %v", svc.Name, svc.Spec.Selector, d.Spec.Template.Labels)
	}
	c := scandContainer(t, d)
	var grpc bool
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.String() == "grpc" || p.TargetPort.IntValue() == int(port(t, c, "grpc")) {
			grpc = true
		}
	}
	if !grpc {
		t.Errorf("Service %s has no port to the grpc containerPort", svc.Name)
	}
}

func checkPDB(t testing.TB, o objects, d *appsv1.Deployment) {
	pdb := only[*policyv1.PodDisruptionBudget](t, o)
	if !selects(t, pdb.Spec.Selector, labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("PodDisruptionBudget %s does not select the pods", pdb.Name)
	}
	if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
		t.Errorf("PodDisruptionBudget %s sets neither maxUnavailable nor minAvailable", pdb.Name)
	}
	if m := pdb.Spec.MaxUnavailable; m != nil && m.IntValue() == 0 && m.String() == "0" {
		t.Errorf("PodDisruptionBudget %s: maxUnavailable 0 blocks every node drain", pdb.Name)
	}
}

func checkHPA(t testing.TB, o objects, d *appsv1.Deployment) {
	hpa := only[*autoscalingv2.HorizontalPodAutoscaler](t, o)
	ref := hpa.Spec.ScaleTargetRef
	if ref.Kind != "Deployment" || ref.Name != d.Name || ref.APIVersion != "apps/v1" {
		t.Errorf("HPA targets %s %s, not the Deployment %s", ref.Kind, ref.Name, d.Name)
	}
	if d.Spec.Replicas != nil {
		t.Errorf("Deployment sets replicas while the HPA owns the count: every apply would reset it")
	}
	if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 {
		t.Errorf("HPA minReplicas %v: want at least 2, so that a client has somewhere to fail over", hpa.Spec.MinReplicas)
	}
	if hpa.Spec.MinReplicas != nil && hpa.Spec.MaxReplicas < *hpa.Spec.MinReplicas {
		t.Errorf("HPA maxReplicas %d < minReplicas %d", hpa.Spec.MaxReplicas, *hpa.Spec.MinReplicas)
	}
	var cpu bool
	for _, m := range hpa.Spec.Metrics {
		if m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
			cpu = true
		}
	}
	if !cpu {
		t.Errorf("HPA has no CPU metric")
	}
}

func checkNetworkPolicy(t testing.TB, o objects, d *appsv1.Deployment) {
	np := only[*networkingv1.NetworkPolicy](t, o)
	if !selects(t, &np.Spec.PodSelector, labels.Set(d.Spec.Template.Labels)) {
		t.Fatalf("NetworkPolicy %s does not select the pods", np.Name)
	}
	grpcPort := port(t, scandContainer(t, d), "grpc")
	var in, dns bool
	for _, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Port != nil && (p.Port.IntValue() == int(grpcPort) || p.Port.String() == "grpc") {
				in = true
			}
		}
	}
	for _, r := range np.Spec.Egress {
		for _, p := range r.Ports {
			if p.Port != nil && p.Port.IntValue() == 53 {
				dns = true
			}
		}
	}
	if !in {
		t.Errorf("NetworkPolicy %s admits nothing on the Flight port %d", np.Name, grpcPort)
	}
	if slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) && !dns {
		t.Errorf("NetworkPolicy %s restricts egress without allowing DNS", np.Name)
	}
}

func checkServiceAccount(t testing.TB, o objects, d *appsv1.Deployment) {
	sa := only[*corev1.ServiceAccount](t, o)
	if d.Spec.Template.Spec.ServiceAccountName != sa.Name {
		t.Errorf("pods run as ServiceAccount %q, the build makes %q", d.Spec.Template.Spec.ServiceAccountName, sa.Name)
	}
	if _, ok := sa.Annotations["eks.amazonaws.com/role-arn"]; !ok {
		t.Errorf("ServiceAccount %s has no IRSA annotation (eks.amazonaws.com/role-arn)", sa.Name)
	}
	if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("the pods mount a Kubernetes API token; scand never calls the API")
	}
}

// checkFiles requires every file a flag names to be on a mounted volume,
// and, when the build has the Secret behind it (withSecrets), the Secret
// to have that key. The base must make no Secret: applying it would
// overwrite real ones.
func checkFiles(t testing.TB, o objects, d *appsv1.Deployment, c *corev1.Container, cfg config, withSecrets bool) {
	secrets := map[string]*corev1.Secret{}
	for _, s := range every[*corev1.Secret](o) {
		secrets[s.Name] = s
	}
	if !withSecrets && len(secrets) > 0 {
		t.Errorf("the base makes Secrets %v: applying it would overwrite the real ones", slices.Collect(mapsKeys(secrets)))
	}
	vols := map[string]corev1.Volume{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("volumeMount %s: no such volume", m.Name)
			continue
		}
		if v.Secret != nil && m.SubPath != "" {
			t.Errorf("volumeMount %s mounts a Secret with subPath: the kubelet never updates it, so renewed certificates would not arrive", m.Name)
		}
		if v.Secret != nil && !m.ReadOnly {
			t.Errorf("volumeMount %s: Secret mounted writable", m.Name)
		}
	}
	for _, f := range fileFlags {
		p, ok := cfg.flag(f)
		if !ok || p == "" {
			continue
		}
		m, rel := mountOf(c, p)
		if m == nil {
			t.Errorf("--%s=%s is on no mounted volume", f, p)
			continue
		}
		v := vols[m.Name]
		if v.Secret == nil || !withSecrets {
			continue
		}
		s, ok := secrets[v.Secret.SecretName]
		if !ok {
			t.Errorf("--%s=%s: the build makes no Secret %s", f, p, v.Secret.SecretName)
			continue
		}
		if _, ok := s.StringData[rel]; !ok {
			if _, ok := s.Data[rel]; !ok {
				t.Errorf("--%s=%s: Secret %s has no key %q", f, p, s.Name, rel)
			}
		}
	}
	if root, ok := cfg.flag("root"); ok {
		if m, _ := mountOf(c, root+"/x"); m == nil {
			t.Errorf("--root=%s is not a mounted volume (the root filesystem is read-only and holds no data)", root)
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// mountOf returns the mount holding file p and p relative to it.
func mountOf(c *corev1.Container, p string) (*corev1.VolumeMount, string) {
	for i, m := range c.VolumeMounts {
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/"); ok {
			return &c.VolumeMounts[i], rel
		}
	}
	return nil, ""
}

func checkImage(t testing.TB, c *corev1.Container) {
	img := c.Image
	if strings.Contains(img, "@sha256:") {
		return
	}
	i := strings.LastIndex(img, ":")
	if i < 0 || strings.Contains(img[i:], "/") || img[i+1:] == "latest" {
		t.Errorf("image %q: pin a tag or digest (not latest)", img)
	}
}

func checkServiceMonitor(t testing.TB, o objects, d *appsv1.Deployment) {
	sm := only[*serviceMonitor](t, o)
	svc := only[*corev1.Service](t, o)
	if !selects(t, &sm.Spec.Selector, labels.Set(svc.Labels)) {
		t.Errorf("ServiceMonitor %s does not select the Service %s (labels %v)", sm.Name, svc.Name, svc.Labels)
	}
	var names []string
	for _, p := range svc.Spec.Ports {
		names = append(names, p.Name)
	}
	for _, e := range sm.Spec.Endpoints {
		if !slices.Contains(names, e.Port) {
			t.Errorf("ServiceMonitor endpoint port %q is not a Service port %v", e.Port, names)
		}
		if e.Path != "" && e.Path != "/metrics" {
			t.Errorf("ServiceMonitor path %q: scand serves /metrics", e.Path)
		}
	}
}

// TestKustomizationsListed fails when a directory under k8s/ holds a
// kustomization.yaml the test does not build.
func TestKustomizationsListed(t *testing.T) {
	var found []string
	err := filepath.WalkDir(".", func(p string, de os.DirEntry, err error) error {
		if err == nil && de.Name() == "kustomization.yaml" {
			found = append(found, filepath.ToSlash(filepath.Dir(p)))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range found {
		if !slices.Contains(kustomizations, dir) && dir != "secrets-example" {
			t.Errorf("%s/kustomization.yaml is not in kustomizations", dir)
		}
	}
}

// checkMembership requires the replicas to join into one tier as
// docs/scale-out.md says: peers from the headless Service's DNS records,
// each replica advertising its pod IP with TLS, and a drain timeout equal
// to the one the termination grace period is checked against
// (stopGraceSeconds).
func checkMembership(t testing.TB, cfg config) {
	dns, _ := cfg.flag("peers-dns")
	if !strings.HasPrefix(dns, "scand.$(POD_NAMESPACE).svc") || !strings.HasSuffix(dns, ":8815") {
		t.Errorf("--peers-dns=%q: membership wants the headless Service scand.$(POD_NAMESPACE).svc...:8815", dns)
	}
	if adv, _ := cfg.flag("advertise"); adv != "grpc+tls://$(POD_IP):8815" {
		t.Errorf("--advertise=%q: membership wants grpc+tls://$(POD_IP):8815", adv)
	}
	v, _ := cfg.flag("drain-timeout")
	if d, err := time.ParseDuration(v); err != nil || d != stopGraceSeconds*time.Second {
		t.Errorf("--drain-timeout=%q: want %ds, what terminationGracePeriodSeconds is checked against", v, stopGraceSeconds)
	}
}

// checkCache requires the page cache's directory (--cache-dir) on a
// writable volume that holds --cache-size with room to spare (file-system
// blocks, the page being written: 1.2x at least), and, for an emptyDir,
// a pod ephemeral-storage limit that covers it: the kubelet evicts a pod
// whose emptyDir outgrows its sizeLimit or whose ephemeral storage
// outgrows its limit.
func checkCache(t testing.TB, d *appsv1.Deployment, c *corev1.Container, cfg config) {
	dir, ok := cfg.flag("cache-dir")
	if !ok || dir == "" {
		return
	}
	m, _ := mountOf(c, strings.TrimSuffix(dir, "/")+"/x")
	if m == nil || m.ReadOnly {
		t.Errorf("--cache-dir=%s is not on a writable mounted volume (the root filesystem is read-only)", dir)
		return
	}
	v, ok := cfg.flag("cache-size")
	if !ok {
		t.Errorf("--cache-size is not set: the cache volume cannot be sized from a default that may change")
		return
	}
	size, err := parseSize(v)
	if err != nil {
		t.Fatalf("--cache-size=%s: %v", v, err)
	}
	var vol *corev1.Volume
	for i, w := range d.Spec.Template.Spec.Volumes {
		if w.Name == m.Name {
			vol = &d.Spec.Template.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.EmptyDir == nil {
		return // a PersistentVolume: its claim sizes it
	}
	if vol.EmptyDir.SizeLimit == nil || vol.EmptyDir.SizeLimit.Value() < size*12/10 {
		t.Errorf("cache volume %s: sizeLimit %v for --cache-size %s; want at least 1.2x", vol.Name, vol.EmptyDir.SizeLimit, v)
		return
	}
	lim, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]
	if ok && lim.Value() < vol.EmptyDir.SizeLimit.Value() {
		t.Errorf("ephemeral-storage limit %s is below the cache volume's sizeLimit %s: the kubelet would evict the pod as the cache fills", lim.String(), vol.EmptyDir.SizeLimit.String())
	}
}
