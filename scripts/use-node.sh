# Source this (`. scripts/use-node.sh`) from the repository's root: when the `node` on PATH is
# older than rho needs (22.15) or missing, it fetches Node.js 22 from the npm registry (the
# official binaries, published as the package node-<os>-<arch>) into .node/ in the clone, puts it
# first on PATH in this shell, and says so. With a new enough Node it does nothing. Needs `npm`
# (any version; it runs on whichever Node) and `tar`.
# It is sourced, not run, so that the commands after it (pnpm install, pnpm test) use that Node;
# it never exits the shell that sources it.

rho_use_node() {
  rho_node_version=${RHO_NODE_VERSION:-22.23.5}
  rho_found=$(node -p process.versions.node 2>/dev/null || true)
  if [ -n "$rho_found" ]; then
    rho_major=${rho_found%%.*}
    rho_minor=${rho_found#*.}
    rho_minor=${rho_minor%%.*}
    if [ "$rho_major" -gt 22 ] || { [ "$rho_major" -eq 22 ] && [ "$rho_minor" -ge 15 ]; }; then
      return 0
    fi
  fi
  case "$(uname -s)" in
    Linux) rho_os=linux ;;
    Darwin) rho_os=darwin ;;
    *)
      echo "rho: Node.js ${rho_found:-(none)} is older than 22.15 and this system ($(uname -s)) has no Node package on the npm registry: install Node.js 22 or 24 from nodejs.org." >&2
      return 1
      ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) rho_arch=x64 ;;
    aarch64 | arm64) rho_arch=arm64 ;;
    *)
      echo "rho: Node.js ${rho_found:-(none)} is older than 22.15 and there is no Node package for $(uname -m) on the npm registry: install Node.js 22 or 24 from nodejs.org." >&2
      return 1
      ;;
  esac
  rho_dir="$PWD/.node/$rho_node_version"
  if [ ! -x "$rho_dir/package/bin/node" ]; then
    echo "rho: Node.js ${rho_found:-(none)} is older than 22.15: fetching Node.js $rho_node_version from the npm registry (node-$rho_os-$rho_arch) into .node/" >&2
    mkdir -p "$rho_dir" || return 1
    (cd "$rho_dir" && npm pack --silent "node-$rho_os-$rho_arch@$rho_node_version" >/dev/null &&
      tar xzf "node-$rho_os-$rho_arch-$rho_node_version.tgz" && rm -f "node-$rho_os-$rho_arch-$rho_node_version.tgz") || {
      echo "rho: could not fetch node-$rho_os-$rho_arch@$rho_node_version with npm: install Node.js 22 or 24 from nodejs.org." >&2
      return 1
    }
  fi
  PATH="$rho_dir/package/bin:$PATH"
  export PATH
  hash -r 2>/dev/null || true
  echo "rho: using Node.js $(node -p process.versions.node) from .node/$rho_node_version (first on PATH in this shell; the system's is ${rho_found:-missing})" >&2
}
rho_use_node
