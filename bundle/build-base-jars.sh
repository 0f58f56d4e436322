#!/usr/bin/env bash
# Builds another commit's jars for run.sh's compare stage: target/base-<commit>/ holds the main jars of
# its client (or codecs), device, library, observability, samples and bench modules, COMMIT, and MAIN
# (its BenchMain class); target/base-<commit>.tar.xz is what travels beside the bundle. The commit's
# dependencies must be the bundle's (same Vert.x, JCuda, Hazelcast): its jars join the bundle's lib.
#
# usage, after build-gpu-bundle.sh (whose mvn clean empties target/): bash bundle/build-base-jars.sh COMMIT
# then on the GPU host, the archive unpacked beside the bundle:
#   BASE=target/base-<commit> bash target/gpu-bundle/run.sh OUT compare
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
commit="$(git -C "$root" rev-parse --short "${1:?usage: build-base-jars.sh COMMIT}")"
tree="$root/target/base-src-$commit"
out="$root/target/base-$commit"
rm -rf "$tree" "$out"
git -C "$root" worktree add -q --detach "$tree" "$commit"
trap 'git -C "$root" worktree remove --force "$tree"' EXIT
(cd "$tree" && mvn -B -q -DskipTests -Dmaven.javadoc.skip package)
mkdir -p "$out"
for m in client codecs device-verticle library-verticles observability samples bench; do
  [ -d "$tree/$m/target" ] || continue
  for j in "$tree/$m"/target/vertx-cuda-*-SNAPSHOT.jar; do cp "$j" "$out/"; done
done
main="$(git -C "$tree" ls-files '*/BenchMain.java' | head -n 1)"
main="${main#*src/main/java/}"
main="${main%.java}"
echo "${main//\//.}" > "$out/MAIN"
echo "$commit" > "$out/COMMIT"
ls "$out"
tar -C "$root/target" -cf - "base-$commit" | xz -T2 -6 > "$out.tar.xz"
du -sh "$out.tar.xz"
