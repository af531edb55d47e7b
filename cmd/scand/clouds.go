package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/scand/scand/storage/azure"
	"github.com/scand/scand/storage/gcs"
)

// cloudConfigs are the settings of the Google Cloud Storage and Azure Blob
// Storage backends, as the flags and the SDKs' environment variables give
// them. A store is served only when asked for: any of its --gcs-* or
// --azure-* flags (or SCAND_GCS_* / SCAND_AZURE_*), or the variables that
// name a store outright (STORAGE_EMULATOR_HOST; AZURE_STORAGE_ACCOUNT or
// AZURE_STORAGE_CONNECTION_STRING). Credentials alone in the environment
// (GOOGLE_APPLICATION_CREDENTIALS, a workload identity) do not turn a
// store on, so a server does not serve buckets its pod's identity reaches
// unasked.
type cloudConfigs struct {
	gcsOn bool // --gcs
	gcs   gcs.Config
	azure azure.Config
}

func defineCloudFlags(fs *flag.FlagSet, c *cloudConfigs) {
	fs.BoolVar(&c.gcsOn, "gcs", false, "serve gs://bucket/path names from Google Cloud Storage, with Application Default Credentials unless --gcs-credentials-file or --gcs-anonymous says otherwise")
	fs.StringVar(&c.gcs.Endpoint, "gcs-endpoint", "", "Google Cloud Storage JSON API `URL`, e.g. http://127.0.0.1:4443/storage/v1/ for an emulator (empty: Google's, or STORAGE_EMULATOR_HOST)")
	fs.StringVar(&c.gcs.CredentialsFile, "gcs-credentials-file", "", "service account key `file` (JSON) (empty: Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, GKE Workload Identity, the metadata server)")
	fs.BoolVar(&c.gcs.Anonymous, "gcs-anonymous", false, "unauthenticated Google Cloud Storage requests, for public buckets")
	fs.IntVar(&c.gcs.MaxAttempts, "gcs-max-attempts", 0, fmt.Sprintf("attempts per Google Cloud Storage request before giving up (0 = default, %d)", gcs.DefaultMaxAttempts))
	fs.StringVar(&c.azure.Account, "azure-account", "", "Azure storage `account` name served as az://container/path and abfss://container@account.dfs.core.windows.net/path (default: AZURE_STORAGE_ACCOUNT)")
	fs.StringVar(&c.azure.Endpoint, "azure-endpoint", "", "Azure Blob service `URL`, e.g. http://127.0.0.1:10000/devstoreaccount1 for Azurite (empty: https://ACCOUNT.blob.core.windows.net/)")
	fs.StringVar(&c.azure.Key, "azure-key", "", "the account's shared `key` (default: AZURE_STORAGE_KEY; prefer the variable, flags show in ps)")
	fs.StringVar(&c.azure.SAS, "azure-sas", "", "shared access signature `token` (default: AZURE_STORAGE_SAS_TOKEN)")
	fs.StringVar(&c.azure.ConnectionString, "azure-connection-string", "", "connection `string` with the account, endpoint and key or SAS (default: AZURE_STORAGE_CONNECTION_STRING)")
	fs.BoolVar(&c.azure.Anonymous, "azure-anonymous", false, "unauthenticated Azure requests, for public containers")
	fs.IntVar(&c.azure.MaxAttempts, "azure-max-attempts", 0, fmt.Sprintf("attempts per Azure request before giving up (0 = default, %d)", azure.DefaultMaxAttempts))
}

// enableClouds sets f.gcs and f.azure for the stores asked for (see
// cloudConfigs), filling Azure's settings from the variables the Azure
// CLI and SDKs use where no flag gave them.
func enableClouds(fs *flag.FlagSet, e env, c *cloudConfigs, f *serveFlags) {
	gcsOn, azureOn := c.gcsOn, false
	fs.Visit(func(fl *flag.Flag) {
		if strings.HasSuffix(fl.Name, "-allow") { // a scope, not a store's settings
			return
		}
		if strings.HasPrefix(fl.Name, "gcs-") {
			gcsOn = true
		}
		if strings.HasPrefix(fl.Name, "azure-") {
			azureOn = true
		}
	})
	if v, ok := e.getenv("STORAGE_EMULATOR_HOST"); ok && v != "" {
		gcsOn = true
	}
	for _, fill := range []struct {
		v   *string
		env string
	}{
		{&c.azure.Account, "AZURE_STORAGE_ACCOUNT"},
		{&c.azure.Key, "AZURE_STORAGE_KEY"},
		{&c.azure.SAS, "AZURE_STORAGE_SAS_TOKEN"},
		{&c.azure.ConnectionString, "AZURE_STORAGE_CONNECTION_STRING"},
	} {
		if v, ok := e.getenv(fill.env); ok && v != "" && *fill.v == "" {
			*fill.v = v
			if fill.env == "AZURE_STORAGE_ACCOUNT" || fill.env == "AZURE_STORAGE_CONNECTION_STRING" {
				azureOn = true
			}
		}
	}
	if gcsOn {
		f.gcs = &c.gcs
	}
	if azureOn {
		f.azure = &c.azure
	}
}
