#!/usr/bin/env bash
# Installs the external servers scand's tests run against, into
# <repo>/.tools/bin, built from source with `go install` (no prebuilt
# downloads):
#   versitygw  v1.8.0   an S3-compatible gateway over a local directory
#                       (storage/s3 tests talk real S3 to it)
#   server     v2.12.0  toxiproxy's proxy server (fault tests: latency,
#                       connection resets, bodies cut mid-transfer)
#   cli        v2.12.0  toxiproxy's command-line client (for poking by hand)
#   fake-gcs-server v1.56.0  a Google Cloud Storage emulator (storage/gcs
#                       tests and e2e talk the GCS JSON API to it)
# and, with npm, into <repo>/.tools/azurite:
#   azurite    3.37.0   Microsoft's Azure Storage emulator; its blob service
#                       (.tools/azurite/node_modules/.bin/azurite-blob) is what
#                       storage/azure tests and e2e talk to. Needs Node.js 18+;
#                       without npm it is skipped with a warning (its tests skip).
# and, with Maven, into <repo>/.tools/jdbc:
#   flight-sql-jdbc-driver 18.3.0  the Arrow Flight SQL JDBC driver (one shaded
#                       jar from Maven Central) that e2e/test_flightsql.py runs
#                       a small Java program with; without mvn it is skipped
#                       with a warning (the JDBC test skips).
# and, with Maven and Python, into <repo>/.tools/spark and <repo>/.venv-spark:
#   iceberg-spark-runtime-4.0_2.13 1.10.0  Iceberg's Spark runtime jar, and
#   pyspark 4.0.1 (pinned in e2e/requirements-spark.txt, a venv of its own:
#                       the e2e venv has a newer pyspark that this Iceberg
#                       release does not support); e2e/test_iceberg_spark.py
#                       writes tables with deletes through them. Without mvn
#                       it is skipped with a warning (that test skips).
#   delta-spark_2.13 4.0.0 and delta-storage 4.0.0  Delta's Spark connector
#                       (.tools/spark/delta-*.jar): the same Spark session
#                       (e2e/spark_tables.py) writes Delta tables too, for
#                       e2e/test_delta_spark.py.
# and, with Maven and Java, into <repo>/.tools/iceberg-rest:
#   iceberg-open-api 1.10.0 (test-fixtures)  the Iceberg project's REST catalog
#                       server (RESTCatalogServer, as the apache/iceberg-rest-fixture
#                       image runs it) with its dependencies, named by
#                       e2e/restcatalog/pom.xml; e2e/test_iceberg_catalog.py starts
#                       it. Without mvn or java it is skipped with a warning (the
#                       REST catalog test skips).
#
# Idempotent: a tool is skipped when its binary exists and its stamp file
# (.tools/stamps/NAME) names the pinned version; bump a version below to
# reinstall. Works from any directory; exits non-zero on the first failure.
#
#   bash scripts/install-tools.sh
#
# Tests find versitygw through $SCAND_VERSITYGW or .tools/bin/versitygw, and
# toxiproxy through $SCAND_TOXIPROXY or .tools/bin/server, fake-gcs-server
# through $SCAND_FAKE_GCS or .tools/bin/fake-gcs-server, and Azurite through
# $SCAND_AZURITE or .tools/azurite/node_modules/.bin/azurite-blob; without
# them they skip and say to run this script.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.tools/bin"
STAMPS="$ROOT/.tools/stamps"
mkdir -p "$BIN" "$STAMPS"

# The toxiproxy module's @latest resolves to an old v2.5.0 (later tags are
# not seen as newer by the proxy), so every version here is pinned.
VERSITYGW_VERSION=v1.8.0
TOXIPROXY_VERSION=v2.12.0
FAKE_GCS_VERSION=v1.56.0
AZURITE_VERSION=3.37.0
FLIGHT_SQL_JDBC_VERSION=18.3.0
ICEBERG_SPARK_RUNTIME=org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0
# Delta's Spark connector needs only delta-storage beyond what pyspark ships
# (its other dependency, antlr4-runtime, is in pyspark's jars).
DELTA_SPARK_JARS=(io.delta:delta-spark_2.13:4.0.0 io.delta:delta-storage:4.0.0)

# Every pinned tool is also kept in a per-user cache, one folder per tool and version
# ($SCAND_TOOLS_CACHE, default ~/.cache/scand-tools), so that a fresh clone on a
# machine that has installed it once copies it instead of building or
# downloading it again. A version bump is a new folder.
CACHE="${SCAND_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scand-tools}"

# install NAME PACKAGE VERSION: go install PACKAGE@VERSION into $BIN, unless
# $BIN/NAME is already there at VERSION.
install() {
  local name=$1 pkg=$2 version=$3
  local stamp="$STAMPS/$name" cached="$CACHE/$name@$version"
  if [[ -x "$BIN/$name" && "$(cat "$stamp" 2>/dev/null || true)" == "$pkg@$version" ]]; then
    echo "$name: $pkg@$version already installed in $BIN"
    return
  fi
  local start=$SECONDS
  if [[ ! -x "$cached/$name" ]]; then
    echo "$name: go install $pkg@$version -> $cached/$name"
    mkdir -p "$cached"
    GOBIN="$cached" go install "$pkg@$version"
  fi
  cp "$cached/$name" "$BIN/$name.tmp" && mv "$BIN/$name.tmp" "$BIN/$name"
  echo "$pkg@$version" >"$stamp"
  echo "$name: $pkg@$version in $BIN ($((SECONDS - start)) s)"
}

install versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION"
install server github.com/Shopify/toxiproxy/v2/cmd/server "$TOXIPROXY_VERSION"
install cli github.com/Shopify/toxiproxy/v2/cmd/cli "$TOXIPROXY_VERSION"
install fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_VERSION"

# Azurite is a Node.js package: npm installs it, pinned, into its own prefix
# (no global install), with the same stamp rule as above.
install_azurite() {
  local dir="$ROOT/.tools/azurite" stamp="$STAMPS/azurite"
  if [[ -x "$dir/node_modules/.bin/azurite-blob" && "$(cat "$stamp" 2>/dev/null || true)" == "azurite@$AZURITE_VERSION" ]]; then
    echo "azurite: azurite@$AZURITE_VERSION already installed in $dir"
    return
  fi
  if ! command -v npm >/dev/null; then
    echo "azurite: npm not found; skipped (install Node.js 18+ to run the Azure tests)" >&2
    return
  fi
  local start=$SECONDS cached="$CACHE/azurite@$AZURITE_VERSION"
  if [[ ! -x "$cached/node_modules/.bin/azurite-blob" ]]; then
    echo "azurite: npm install azurite@$AZURITE_VERSION -> $cached"
    rm -rf "$cached.tmp"
    mkdir -p "$cached.tmp"
    npm install --prefix "$cached.tmp" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION"
    rm -rf "$cached"
    mv "$cached.tmp" "$cached"
  fi
  # npm's .bin entries are relative links, so the tree is linked, not copied.
  rm -rf "$dir"
  ln -s "$cached" "$dir"
  echo "azurite@$AZURITE_VERSION" >"$stamp"
  echo "azurite: azurite@$AZURITE_VERSION in $dir ($((SECONDS - start)) s)"
}
install_azurite

# The Flight SQL JDBC driver: Maven fetches the pinned jar into its local
# repository, which is copied to .tools/jdbc/flight-sql-jdbc-driver.jar.
install_jdbc() {
  local dir="$ROOT/.tools/jdbc" stamp="$STAMPS/flight-sql-jdbc-driver"
  local art="org.apache.arrow:flight-sql-jdbc-driver:$FLIGHT_SQL_JDBC_VERSION"
  if [[ -f "$dir/flight-sql-jdbc-driver.jar" && "$(cat "$stamp" 2>/dev/null || true)" == "$art" ]]; then
    echo "flight-sql-jdbc-driver: $art already installed in $dir"
    return
  fi
  if ! command -v mvn >/dev/null; then
    echo "flight-sql-jdbc-driver: mvn not found; skipped (the JDBC test of e2e/test_flightsql.py skips)" >&2
    return
  fi
  echo "flight-sql-jdbc-driver: mvn dependency:copy $art -> $dir"
  local start=$SECONDS
  mkdir -p "$dir"
  mvn -q -B dependency:copy -Dartifact="$art" -DoutputDirectory="$dir" -Dmdep.stripVersion=true
  echo "$art" >"$stamp"
  echo "flight-sql-jdbc-driver: installed in $((SECONDS - start)) s"
}
install_jdbc

# Spark with Iceberg, for the e2e test of tables whose deletes Spark wrote: the
# runtime jar by Maven (as the JDBC driver above), pyspark into .venv-spark.
install_spark_iceberg() {
  local dir="$ROOT/.tools/spark" stamp="$STAMPS/iceberg-spark-runtime"
  local venv="$ROOT/.venv-spark" req="$ROOT/e2e/requirements-spark.txt"
  if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
    echo "iceberg-spark: mvn or java not found; skipped (e2e/test_iceberg_spark.py skips)" >&2
    return
  fi
  local start=$SECONDS
  if [[ ! -f "$dir/iceberg-spark-runtime.jar" || "$(cat "$stamp" 2>/dev/null || true)" != "$ICEBERG_SPARK_RUNTIME" ]]; then
    echo "iceberg-spark: mvn dependency:copy $ICEBERG_SPARK_RUNTIME -> $dir"
    mkdir -p "$dir"
    mvn -q -B dependency:copy -Dartifact="$ICEBERG_SPARK_RUNTIME" -DoutputDirectory="$dir" -Dmdep.stripVersion=true
    mv "$dir/iceberg-spark-runtime-4.0_2.13.jar" "$dir/iceberg-spark-runtime.jar"
    echo "$ICEBERG_SPARK_RUNTIME" >"$stamp"
  fi
  local delta_stamp="$STAMPS/delta-spark" artifact
  if [[ ! -f "$dir/delta-spark.jar" || ! -f "$dir/delta-storage.jar" ||
        "$(cat "$delta_stamp" 2>/dev/null || true)" != "${DELTA_SPARK_JARS[*]}" ]]; then
    mkdir -p "$dir"
    for artifact in "${DELTA_SPARK_JARS[@]}"; do
      echo "delta-spark: mvn dependency:copy $artifact -> $dir"
      mvn -q -B dependency:copy -Dartifact="$artifact" -DoutputDirectory="$dir" -Dmdep.stripVersion=true
    done
    mv "$dir/delta-spark_2.13.jar" "$dir/delta-spark.jar"
    echo "${DELTA_SPARK_JARS[*]}" >"$delta_stamp"
  fi
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ "$(cat "$venv/.requirements.sha256" 2>/dev/null || true)" != "$want" ]]; then
    echo "iceberg-spark: pip install -r $req -> $venv"
    "$venv/bin/python" -c 'import sys' 2>/dev/null || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$want" >"$venv/.requirements.sha256"
  fi
  echo "iceberg-spark: ready ($((SECONDS - start)) s)"
}
install_spark_iceberg

# The Iceberg REST catalog server: every jar e2e/restcatalog/pom.xml names,
# copied by Maven into .tools/iceberg-rest (re-copied when the pom changes).
install_iceberg_rest() {
  local dir="$ROOT/.tools/iceberg-rest" stamp="$STAMPS/iceberg-rest" pom="$ROOT/e2e/restcatalog/pom.xml"
  if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
    echo "iceberg-rest: mvn or java not found; skipped (the REST catalog test of e2e/test_iceberg_catalog.py skips)" >&2
    return
  fi
  local want
  want="$(sha256sum "$pom" | cut -d' ' -f1)"
  if [[ -d "$dir" && "$(cat "$stamp" 2>/dev/null || true)" == "$want" ]]; then
    echo "iceberg-rest: already installed in $dir"
    return
  fi
  local start=$SECONDS
  echo "iceberg-rest: mvn dependency:copy-dependencies ($pom) -> $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir"
  echo "$want" >"$stamp"
  echo "iceberg-rest: installed in $((SECONDS - start)) s"
}
install_iceberg_rest
echo "tools ready in $BIN"
