package main

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/scand/scand/storage"
)

// TestParseCloudFlags checks when each cloud store is served, and that
// Azure's settings come from the Azure CLI's variables when no flag gives
// them.
func TestParseCloudFlags(t *testing.T) {
	for _, tc := range []struct {
		name         string
		args         []string
		env          map[string]string
		gcs, azure   bool
		azureAccount string
		azureKey     string
	}{
		{name: "nothing asked"},
		{name: "credentials alone do not turn GCS on", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "/k.json"}},
		{name: "--gcs", args: []string{"--gcs"}, gcs: true},
		{name: "a --gcs-* flag", args: []string{"--gcs-endpoint", "http://127.0.0.1:4443/storage/v1/"}, gcs: true},
		{name: "SCAND_GCS_ANONYMOUS", env: map[string]string{"SCAND_GCS_ANONYMOUS": "true"}, gcs: true},
		{name: "STORAGE_EMULATOR_HOST", env: map[string]string{"STORAGE_EMULATOR_HOST": "127.0.0.1:4443"}, gcs: true},
		{name: "an allow-list alone is a scope", args: []string{"--gcs-allow", "b", "--azure-allow", "c"}},
		{
			name: "AZURE_STORAGE_ACCOUNT and KEY", env: map[string]string{"AZURE_STORAGE_ACCOUNT": "acct", "AZURE_STORAGE_KEY": "k"},
			azure: true, azureAccount: "acct", azureKey: "k",
		},
		{
			name: "the flag beats the SDK's variable", args: []string{"--azure-account", "flagacct"},
			env:   map[string]string{"AZURE_STORAGE_ACCOUNT": "envacct"},
			azure: true, azureAccount: "flagacct",
		},
		{name: "a key alone does not turn Azure on", env: map[string]string{"AZURE_STORAGE_KEY": "k"}},
		{name: "both", args: []string{"--gcs", "--azure-account", "a"}, gcs: true, azure: true, azureAccount: "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := testEnv(tc.env)
			f, err := parseServe(tc.args, e)
			if err != nil {
				t.Fatal(err)
			}
			if (f.gcs != nil) != tc.gcs || (f.azure != nil) != tc.azure {
				t.Fatalf("gcs %v, azure %v; want %v, %v", f.gcs != nil, f.azure != nil, tc.gcs, tc.azure)
			}
			if f.azure != nil && (f.azure.Account != tc.azureAccount || f.azure.Key != tc.azureKey) {
				t.Errorf("azure account %q key %q, want %q %q", f.azure.Account, f.azure.Key, tc.azureAccount, tc.azureKey)
			}
			if (tc.gcs || tc.azure) && f.io.Concurrency != s3IOConcurrency {
				t.Errorf("--io-concurrency %d with an object store, want %d", f.io.Concurrency, s3IOConcurrency)
			}
		})
	}
}

// TestOneMuxServesEveryStore wires local, S3, GCS and Azure at once
// (no request is sent) and checks that names route to each.
func TestOneMuxServesEveryStore(t *testing.T) {
	e, _, _ := testEnv(nil)
	f, err := parseServe([]string{"--s3-endpoint", "http://127.0.0.1:1", "--gcs-anonymous", "--gcs-endpoint", "http://127.0.0.1:1/storage/v1/",
		"--azure-account", "acct", "--azure-endpoint", "http://127.0.0.1:1/acct", "--azure-anonymous"}, e)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBucket(context.Background(), t.TempDir(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"dir/x.parquet": "dir/x.parquet",
		"s3://b/x":      "s3://b/x",
		"gs://b/x":      "gs://b/x",
		"az://c/x":      "az://c/x",
		"abfss://c@acct.dfs.core.windows.net/d/x": "az://c/d/x",
		"wasbs://c@acct.blob.core.windows.net/x":  "az://c/x",
	} {
		if got, err := b.Canonical(name); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := b.Canonical("abfss://c@other.dfs.core.windows.net/x"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("another account's name: %v, want fs.ErrPermission", err)
	}
	if _, err := b.Stat(context.Background(), "hdfs://nn/x"); !errors.Is(err, storage.ErrUnsupported) {
		t.Errorf("an unserved scheme: %v, want storage.ErrUnsupported", err)
	}
}

// TestCloudAllowLists checks --gcs-allow and --azure-allow under --auth
// none: they narrow their store's names and leave the others alone.
func TestCloudAllowLists(t *testing.T) {
	scopes, err := limitStores(nil, securityFlags{gcsAllow: stringList{"pub"}, azureAllow: stringList{"az://ctr/team"}})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := scopes("anonymous")
	if !ok {
		t.Fatal("anonymous has no scope")
	}
	for name, want := range map[string]bool{
		"local.parquet":      true,
		"s3://any/x":         true,
		"gs://pub/x":         true,
		"gs://private/x":     false,
		"az://ctr/team/x":    true,
		"az://ctr/other/x":   false,
		"az://otherctr/x":    false,
		"gs://pub/../priv/x": false,
	} {
		if got := s.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
	if _, err := limitStores(nil, securityFlags{gcsAllow: stringList{""}}); err == nil {
		t.Error("an empty --gcs-allow entry was accepted")
	}
}
