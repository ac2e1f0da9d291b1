#!/usr/bin/env bash
# install.sh: install what the containerd e2e tests and `make containerd-up` need, from Debian's
# packages, when it is missing. Safe to run twice; run as root (CI and the course VMs are).
#
#   containerd                   1.6.x in Debian 12: the CRI runtime (its CRI plugin is built in)
#   runc                         the OCI runtime containerd starts containers with
#   busybox-static               one static binary: the shell and tools of our local busybox image
#   containernetworking-plugins  the CNI "loopback" plugin, for the runtime's NetworkReady condition
#   iptables                     the kube-proxy image's iptables (hack/containerd/images/kubeadm.go
#                                copies this machine's), for `make kubeadm-up`
#   openssl                      the kubeadm cluster's controller-manager and scheduler serving
#                                certificates (hack/kubeadm/up.sh)
#   bind9-dnsutils               dig, which the e2e images agnhost and glibc-dns-testing carry (as
#                                upstream's do) for the [sig-network] DNS specs (images/e2e.go)
#   netcat-openbsd               nc.openbsd, agnhost's nc (as upstream's): the Services specs run
#                                `nc -v -t -w 2 IP PORT`, options busybox's nc lacks
#   dash                         glibc-dns-testing's /bin/sh (debian-base's): busybox's sh would run
#                                its own hostname applet, not glibc's (agnhost's sh is bash)
#
# Usage: hack/containerd/install.sh      (prints what it installed, or nothing to do)
set -euo pipefail

need=()
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
# Debian's busybox package also has a /bin/busybox, but a dynamic one that cannot run in an image.
[[ $(dpkg-query -W -f='${Status}' busybox-static 2>/dev/null) == *" installed" ]] || need+=(busybox-static)
[[ -x /usr/lib/cni/loopback || -x /opt/cni/bin/loopback ]] || need+=(containernetworking-plugins)
command -v iptables >/dev/null || [[ -x /usr/sbin/iptables ]] || need+=(iptables)
command -v openssl >/dev/null || need+=(openssl)
command -v dig >/dev/null || need+=(bind9-dnsutils)
command -v nc.openbsd >/dev/null || need+=(netcat-openbsd)
command -v dash >/dev/null || need+=(dash)

if (( ${#need[@]} == 0 )); then
  echo "containerd, runc, busybox-static, the CNI plugins, iptables, openssl, dig, nc.openbsd and dash are installed"
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install.sh: missing ${need[*]}, and this is not Debian/Ubuntu (no apt-get): install them with your distribution's packages" >&2
  exit 1
fi
if [[ $(id -u) != 0 ]]; then
  echo "install.sh: need root to apt-get install ${need[*]}; run it with sudo" >&2
  exit 1
fi
echo "installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
