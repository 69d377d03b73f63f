# kube-headroom runtime image (design §13) for builders that reach a registry: the same image
# scripts/release/image.sh builds without one. The build stage compiles `headroom` as scripts/setup.sh
# and CMake do for the tests, then `scripts/release/image.sh --rootfs` assembles the root filesystem
# from the stage's own Debian packages: the stripped binary, exactly the shared libraries it
# links (with their symlinks and copyright files), /etc/passwd and /etc/group for 65532. The
# runtime stage is that tree alone, FROM scratch: no shell, no package manager. Nothing names an
# architecture, so `docker buildx build --platform linux/arm64 .` works as well as amd64.
#
# The context has no .git (.dockerignore), so the version comes in as build arguments, computed
# by scripts/release/version.sh from the checkout (docs/cli.md, "version"):
#
#   eval "$(scripts/release/version.sh)"
#   docker build --build-arg VERSION="$version" --build-arg COMMIT="$commit" \
#     --build-arg BUILD_DATE="$date" --build-arg SOURCE_DATE_EPOCH="$epoch" \
#     -t ghcr.io/kube-headroom/headroom:"$tag" .
#
# They reach CMake as -DHR_VERSION, -DHR_COMMIT, -DHR_BUILD_DATE (so `headroom version` in the
# image says what the checkout's own build says) and the OCI labels of the image. Without them
# the binary says <VERSION>+unknown, commit unknown, and the labels are empty.
# BASE is the build stage's Debian (default debian:bookworm; any image of that release will do,
# e.g. a local one from `mmdebstrap --variant=minbase bookworm` + `docker import`).
#
# yyjson comes from Debian 13 (trixie), pinned low, since bookworm does not ship it.
# Without a registry (this project's machines), use scripts/release/image.sh: it builds the same tree,
# packs it by hand and checks it in a container. tests/release/dockerfile.sh builds this file with
# Debian's Docker engine, a locally made base and `docker build --network=host` (the apt-get of
# the build stage reaches Debian's mirror) and checks that the image's `headroom version -o json`
# is the checkout's build's.
ARG BASE=debian:bookworm
# The build tools alone (a stage of its own, so a builder can cache it apart from the source).
FROM ${BASE} AS deps
RUN printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      > /etc/apt/sources.list.d/trixie.sources \
 && printf 'Package: *\nPin: release n=trixie\nPin-Priority: 100\n' > /etc/apt/preferences.d/trixie \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      cmake ninja-build pkg-config gcc libc6-dev git ca-certificates \
      libcurl4-gnutls-dev zlib1g-dev libmicrohttpd-dev libfyaml-dev libcmocka-dev \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t trixie libyyjson-dev

FROM deps AS build
# After the tools, so that a new version reuses their layer. SOURCE_DATE_EPOCH is in the
# environment of the RUN below (scripts/release/version.sh reads it when BUILD_DATE is empty);
# unset when empty, since gcc refuses an empty one.
ARG VERSION=""
ARG COMMIT=""
ARG BUILD_DATE=""
ARG SOURCE_DATE_EPOCH=""
WORKDIR /src
COPY . .
RUN if [ -z "$SOURCE_DATE_EPOCH" ]; then unset SOURCE_DATE_EPOCH; fi \
 && cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_WERROR=OFF \
      -DHR_VERSION="$VERSION" -DHR_COMMIT="$COMMIT" -DHR_BUILD_DATE="$BUILD_DATE" >/dev/null \
 && ninja -C /build headroom \
 && scripts/release/image.sh --rootfs /rootfs --bin /build/headroom

FROM scratch
ARG VERSION=""
ARG COMMIT=""
ARG BUILD_DATE=""
LABEL org.opencontainers.image.title="kube-headroom" \
      org.opencontainers.image.description="Node-aware CPU limits for Kubernetes pods, resized in place (pods/resize) and set at admission." \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${BUILD_DATE}" \
      org.opencontainers.image.source="https://github.com/kube-headroom/kube-headroom" \
      org.opencontainers.image.url="https://github.com/kube-headroom/kube-headroom" \
      org.opencontainers.image.documentation="https://github.com/kube-headroom/kube-headroom/blob/main/README.md" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /rootfs/ /
USER 65532:65532
ENTRYPOINT ["/usr/bin/headroom"]
CMD ["run", "--leader-elect"]
