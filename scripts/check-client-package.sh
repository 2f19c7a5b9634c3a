#!/usr/bin/env bash
# A handler author's package that depends on the Swift client (Clients/Swift) must resolve only
# what the client uses: never the daemon's own dependencies (GRDB, TOMLKit, swift-prometheus, …).
# Makes a scratch package in a temporary folder, resolves it, and checks its dependency tree.
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/Sources/Handler"
cat > "$scratch/Package.swift" <<PACKAGE
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "handler",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$repository/Clients/Swift")],
    targets: [.executableTarget(name: "Handler", dependencies: [.product(name: "DocRouteClient", package: "Swift")])]
)
PACKAGE
echo 'import DocRouteClient' > "$scratch/Sources/Handler/main.swift"
tree=$(cd "$scratch" && "${SWIFT:-swift}" package show-dependencies --format json 2>/dev/null)
names=$(python3 -c '
import json, sys
def walk(node):
    for dependency in node.get("dependencies", []):
        yield dependency["identity"]
        yield from walk(dependency)
print("\n".join(sorted(set(walk(json.load(sys.stdin))))))' <<<"$tree")
echo "a handler depending on Clients/Swift resolves:" $names
allowed="swift swift-nio swift-atomics swift-collections swift-system swift-log swift-crypto swift-asn1"
for name in $names; do
  case " $allowed " in
    *" $name "*) ;;
    *) echo "FAIL: the client package pulls in $name, which a handler does not need; keep it out of Clients/Swift/Package.swift" >&2; exit 1 ;;
  esac
done
echo "PASS: the Swift client resolves only SwiftNIO, swift-log and swift-crypto (and what they need)"
