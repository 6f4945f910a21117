#!/bin/sh
# Installs liveguard-bpf from its release tarball (make dist) on any
# distribution: the static binary, the pytest plugin (beside the binary,
# for `run`, and in the system python3's site directory, where every
# pytest on it loads it), its wheel, the systemd unit and the s6 service
# directory (both naming the installed binary), the man page, bash
# completion, the README and the example policy; the policy itself in
# /etc/liveguard/liveguard.toml when there is none yet (an existing one is
# kept). What it wrote is listed in <prefix>/share/liveguard-bpf/installed,
# which --uninstall removes, with the directories only it made.
#
#   sudo ./install.sh [--prefix DIR] [--destdir DIR] [--sitedir DIR]
#   sudo ./install.sh --uninstall [--prefix DIR] [--destdir DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=/usr/local destdir='' sitedir='' uninstall=0
usage() {
    sed -n '2,13s/^# \{0,1\}//p' "$0"
    echo "  --prefix DIR   where it goes (default /usr/local)"
    echo "  --destdir DIR  a staging root to install into (packaging, tests)"
    echo "  --sitedir DIR  python3's site directory for the plugin (default: asked of python3)"
    echo "  --uninstall    remove what an install with the same --prefix and --destdir wrote"
}
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) [ $# -ge 2 ] || { usage >&2; exit 2; }; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#*=}; shift ;;
        --destdir) [ $# -ge 2 ] || { usage >&2; exit 2; }; destdir=$2; shift 2 ;;
        --destdir=*) destdir=${1#*=}; shift ;;
        --sitedir) [ $# -ge 2 ] || { usage >&2; exit 2; }; sitedir=$2; shift 2 ;;
        --sitedir=*) sitedir=${1#*=}; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "install.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
done
case $prefix in
    /*) prefix=${prefix%/} ;;
    *) echo "install.sh: --prefix must be an absolute path, not '$prefix'" >&2; exit 2 ;;
esac
[ -n "$prefix" ] || prefix=/
manifest=$prefix/share/liveguard-bpf/installed

if [ "$uninstall" = 1 ]; then
    if [ ! -f "$destdir$manifest" ]; then
        echo "install.sh: nothing to uninstall: $destdir$manifest is missing (was it installed with --prefix $prefix?)" >&2
        exit 1
    fi
    # Read whole first: the list names itself.
    list=$(cat "$destdir$manifest")
    # The policy while it is the example still; an edited one stays.
    echo "$list" | sed -n 's/^?//p' | while IFS= read -r f; do
        if cmp -s "$destdir$f" "$destdir$prefix/share/doc/liveguard-bpf/liveguard.toml"; then
            rm -f "$destdir$f"
        else
            echo "install.sh: keeping $destdir$f: it was edited"
        fi
    done
    # Files first, then directories, deepest first, each only when empty.
    echo "$list" | grep -v -e '/$' -e '^?' | while IFS= read -r f; do rm -f "$destdir$f"; done
    echo "$list" | grep -v '/$' | grep '\.py$' | while IFS= read -r f; do
        rm -f "$destdir$(dirname "$f")/__pycache__/$(basename "$f" .py)".*.pyc
        rmdir "$destdir$(dirname "$f")/__pycache__" 2>/dev/null || true
    done
    echo "$list" | grep '/$' | sort -r | while IFS= read -r d; do rmdir "$destdir$d" 2>/dev/null || true; done
    echo "liveguard-bpf removed from $destdir$prefix; a loaded guard stays loaded (liveguard-bpf unload ended it)"
    exit 0
fi

# The system's interpreter, the one its pytest runs on, before any other
# python3 on PATH (a pyenv or virtualenv one).
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
if [ -z "$sitedir" ]; then
    if ! sitedir=$("$python" - "$prefix" 2>/dev/null <<'EOF'
import site, sys, sysconfig
p = sys.argv[1].rstrip("/")
d = [x for x in site.getsitepackages() if x.startswith(p + "/lib")]
d.sort(key=lambda x: not x.startswith(p + "/lib/"))
print(d[0] if d else sysconfig.get_path("purelib", "posix_prefix", {"base": p, "platbase": p}))
EOF
    ) || [ -z "$sitedir" ]; then
        echo "install.sh: $python does not answer where its site directory under $prefix is: install python3, or give --sitedir DIR" >&2
        exit 1
    fi
fi

sbindir=$prefix/sbin
docdir=$prefix/share/doc/liveguard-bpf
sharedir=$prefix/share/liveguard-bpf
s6dir=$sharedir/s6/liveguard-bpf
unitdir=$prefix/lib/systemd/system
tab=$(printf '\t')
listed=$(mktemp) plan=$(mktemp)
trap 'rm -f "$listed" "$plan" "$listed.sub"' EXIT
# What goes where: mode, source, target and whether @SBINDIR@ and @DOCDIR@
# are filled in, one a line.
plan() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-0}" >>"$plan"; }
plan 0755 "$here/liveguard-bpf" "$sbindir/liveguard-bpf"
(cd "$here/python" && find . -type f ! -path '*/__pycache__/*' | sed 's|^\./||' | sort) >"$listed.sub"
while IFS= read -r f; do
    plan 0644 "$here/python/$f" "$prefix/lib/liveguard-bpf/python/$f"
    plan 0644 "$here/python/$f" "$sitedir/$f"
done <"$listed.sub"
for w in "$here"/*.whl; do plan 0644 "$w" "$sharedir/$(basename "$w")"; done
plan 0644 "$here/systemd/liveguard-bpf.service.in" "$unitdir/liveguard-bpf.service" 1
plan 0755 "$here/s6/liveguard-bpf/run.in" "$s6dir/run" 1
plan 0644 "$here/s6/liveguard-bpf/type" "$s6dir/type"
plan 0644 "$here/README.md" "$docdir/README.md"
plan 0644 "$here/liveguard.toml" "$docdir/liveguard.toml"
plan 0644 "$here/man/liveguard-bpf.8" "$prefix/share/man/man8/liveguard-bpf.8"
plan 0644 "$here/bash-completion/liveguard-bpf" "$prefix/share/bash-completion/completions/liveguard-bpf"

# Nothing is written while anything is in the way: a file there that no
# earlier install.sh wrote is another's (a package's), and stays.
while IFS="$tab" read -r mode src dst sub; do
    [ -f "$src" ] || { echo "install.sh: $src is missing from the tarball: unpack it again" >&2; exit 1; }
    if [ -e "$destdir$dst" ] && ! { [ -f "$destdir$manifest" ] && grep -qxF "$dst" "$destdir$manifest"; }; then
        echo "install.sh: $destdir$dst is there already and not from an earlier install.sh (a package's?): remove that first, or give another --prefix" >&2
        exit 1
    fi
done <"$plan"

[ -z "$destdir" ] || mkdir -p "$destdir" || exit 1
# Each directory it creates, so that uninstall removes only those.
mkdirs() {
    d=$1 made=''
    while [ "$d" != / ] && [ ! -d "$destdir$d" ]; do
        made="$d
$made"
        d=$(dirname "$d")
    done
    printf '%s' "$made" | while IFS= read -r m; do
        [ -n "$m" ] || continue
        mkdir "$destdir$m" || exit 1
        echo "$m/" >>"$listed"
    done
}
put() {  # mode source target
    mkdirs "$(dirname "$3")" || exit 1
    if ! { cp "$2" "$destdir$3.new.$$" && chmod "$1" "$destdir$3.new.$$" && mv -f "$destdir$3.new.$$" "$destdir$3"; }; then
        rm -f "$destdir$3.new.$$"
        echo "install.sh: cannot write $destdir$3 (what was written is listed in $destdir$manifest)" >&2
        finish
        exit 1
    fi
    echo "$3" >>"$listed"
}
# The list, merged with an earlier install's: what that one made is ours
# to remove too.
finish() {
    mkdirs "$(dirname "$manifest")"
    echo "$manifest" >>"$listed"
    [ -f "$destdir$manifest" ] && cat "$destdir$manifest" >>"$listed"
    sort -u "$listed" >"$destdir$manifest.new.$$" && mv -f "$destdir$manifest.new.$$" "$destdir$manifest"
}
: >"$listed"
while IFS="$tab" read -r mode src dst sub; do
    if [ "$sub" = 1 ]; then
        sed -e "s|@SBINDIR@|$sbindir|g" -e "s|@DOCDIR@|$docdir|g" "$src" >"$listed.sub" || exit 1
        src=$listed.sub
    fi
    put "$mode" "$src" "$dst"
done <"$plan"
# The administrator's policy: written once, never replaced. Listed with a
# '?': uninstall removes it only while it is the example.
if [ ! -e "$destdir/etc/liveguard/liveguard.toml" ]; then
    put 0644 "$here/liveguard.toml" /etc/liveguard/liveguard.toml
    sed 's|^/etc/liveguard/liveguard.toml$|?&|' "$listed" >"$listed.sub" && cat "$listed.sub" >"$listed"
    policy="the example policy in /etc/liveguard/liveguard.toml (edit it: it protects nothing yet)"
else
    policy="/etc/liveguard/liveguard.toml as it was (the example is in $docdir)"
fi
finish
echo "liveguard-bpf installed in $destdir$prefix, with $policy"
echo "next: sudo systemctl daemon-reload && sudo systemctl enable --now liveguard-bpf"
echo "  (or, without systemd: sudo $sbindir/liveguard-bpf load --config /etc/liveguard/liveguard.toml)"
