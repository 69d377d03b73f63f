# kube-headroom runtime image (design §13) for builders that reach a registry: the same image
# scripts/release/image.sh builds without one. The build stage compiles `headroom` as scripts/setup.sh
# and CMake do for the tests, then `scripts/release/image.sh --rootfs` assembles the root filesystem
# from the stage's own Debian packages: the stripped binary, exactly the shared libraries it
# links (with their symlinks and copyright files), /etc/passwd and /etc/group for 65532. The
# runtime stage is that tree alone, FROM scratch: no shell, no package manager. Nothing names an
# architecture, so `docker buildx build --platform linux/arm64 .` works as well as amd64.
#
#   docker build -t ghcr.io/kube-headroom/headroom:0.1.0 .
#
# yyjson comes from Debian 13 (trixie), pinned low, since bookworm does not ship it.
# Without a registry (this project's machines), use scripts/release/image.sh: it builds the same tree,
# packs it by hand and checks it in a container. This file is not in the tests (no registry for
# debian:bookworm); it was built by hand once with a stand-in base (`mmdebstrap --variant=minbase
# bookworm` + `docker import`) and `docker build --network=host`.
FROM debian:bookworm AS build
RUN printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      > /etc/apt/sources.list.d/trixie.sources \
 && printf 'Package: *\nPin: release n=trixie\nPin-Priority: 100\n' > /etc/apt/preferences.d/trixie \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      cmake ninja-build pkg-config gcc libc6-dev git ca-certificates \
      libcurl4-openssl-dev libssl-dev libmicrohttpd-dev libfyaml-dev libcmocka-dev \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t trixie libyyjson-dev
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_WERROR=OFF >/dev/null \
 && ninja -C /build headroom \
 && scripts/release/image.sh --rootfs /rootfs --bin /build/headroom

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
ENTRYPOINT ["/usr/bin/headroom"]
CMD ["run", "--leader-elect"]
