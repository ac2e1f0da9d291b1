package fakeruntime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// imageFsMountpoint is what ImageFsInfo reports as the image filesystem.
const imageFsMountpoint = "/var/lib/minikubelet-fake/images"

// image is a pulled image. Nothing is downloaded: the ID, digest and size derive from the name.
type image struct {
	id      string // "sha256:<64 hex>"
	seq     uint64 // pull order
	tags    []string
	digests []string
	size    uint64
	spec    *runtimeapi.ImageSpec
}

// ref is what containerd reports as a container's ImageRef: the repo digest (newImage gives every
// image one).
func (i *image) ref() string { return i.digests[0] }

func (i *image) toImage() *runtimeapi.Image {
	return &runtimeapi.Image{
		Id:          i.id,
		RepoTags:    slices.Clone(i.tags),
		RepoDigests: slices.Clone(i.digests),
		Size:        i.size,
		Spec:        proto.Clone(i.spec).(*runtimeapi.ImageSpec),
	}
}

// normalizeImageRef expands a Docker-style short name the way containerd does:
// "busybox" → "docker.io/library/busybox:latest", "k8s.gcr.io/pause" → "k8s.gcr.io/pause:latest".
// A reference with a digest keeps it and gets no tag.
func normalizeImageRef(ref string) string {
	name, digest, hasDigest := strings.Cut(ref, "@")
	domain, rest, ok := strings.Cut(name, "/")
	if !ok || (!strings.ContainsAny(domain, ".:") && domain != "localhost") {
		domain, rest = "docker.io", name
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	name = domain + "/" + rest
	if hasDigest {
		return name + "@" + digest
	}
	if !strings.Contains(rest, ":") {
		name += ":latest"
	}
	return name
}

// repository strips the tag or digest: "docker.io/library/busybox:1.36" → "docker.io/library/busybox".
func repository(normalized string) string {
	name, _, _ := strings.Cut(normalized, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	return name
}

// newImage makes the image for a pull of ref.
func newImage(ref string, spec *runtimeapi.ImageSpec) *image {
	normalized := normalizeImageRef(ref)
	sum := sha256.Sum256([]byte(normalized))
	img := &image{
		id:   "sha256:" + hex.EncodeToString(sum[:]),
		size: 1<<20 + binary.BigEndian.Uint64(sum[:8])%(64<<20), // 1–65 MiB
		spec: proto.Clone(spec).(*runtimeapi.ImageSpec),
	}
	img.spec.Image = normalized
	digest := sha256.Sum256(append([]byte("manifest:"), normalized...))
	if strings.Contains(normalized, "@") {
		img.digests = []string{normalized}
	} else {
		img.tags = []string{normalized}
		img.digests = []string{repository(normalized) + "@sha256:" + hex.EncodeToString(digest[:])}
	}
	return img
}

// findImageLocked resolves an image by ID (with or without "sha256:", or a unique prefix of
// 12+ characters), by tag or by digest. Nil when not present.
func (r *Runtime) findImageLocked(ref string) *image {
	if ref == "" {
		return nil
	}
	id := "sha256:" + strings.TrimPrefix(ref, "sha256:")
	if img, ok := r.images[id]; ok {
		return img
	}
	normalized := normalizeImageRef(ref)
	for _, img := range r.images {
		if slices.Contains(img.tags, normalized) || slices.Contains(img.digests, normalized) {
			return img
		}
	}
	if len(id) < len("sha256:")+12 {
		return nil
	}
	img, _ := lookupByPrefix(r.images, id, "image") // nil when unknown or ambiguous
	return img
}

// PullImage records the image; nothing is downloaded. Injected pull failures apply first.
func (r *Runtime) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, status.Error(codes.InvalidArgument, "image.image is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.faults.takePullFailure(ref); err != nil {
		klog.FromContext(ctx).V(2).Info("Injected pull failure", "image", ref)
		return nil, err
	}
	if img := r.findImageLocked(ref); img != nil {
		return &runtimeapi.PullImageResponse{ImageRef: img.id}, nil
	}
	img := newImage(ref, req.GetImage())
	img.seq = r.nextSeqLocked()
	r.images[img.id] = img
	klog.FromContext(ctx).V(2).Info("Image pulled", "image", ref, "imageID", img.id)
	return &runtimeapi.PullImageResponse{ImageRef: img.id}, nil
}

// ImageStatus reports an image, or a nil image (not an error) when it is not present.
func (r *Runtime) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	if req.GetImage().GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "image.image is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	img := r.findImageLocked(req.GetImage().GetImage())
	if img == nil {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	resp := &runtimeapi.ImageStatusResponse{Image: img.toImage()}
	if req.GetVerbose() {
		resp.Info = map[string]string{"info": `{"source":"` + RuntimeName + ` (nothing was downloaded)"}`}
	}
	return resp, nil
}

// ListImages lists images, optionally only the one the filter names.
func (r *Runtime) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := req.GetFilter().GetImage().GetImage()
	named := r.findImageLocked(want)
	keep := func(img *image) bool { return want == "" || img == named }
	return &runtimeapi.ListImagesResponse{Images: list(r.images, keep, (*image).toImage)}, nil
}

// RemoveImage removes an image with all its tags. Removing a missing image is not an error.
func (r *Runtime) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	if req.GetImage().GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "image.image is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if img := r.findImageLocked(req.GetImage().GetImage()); img != nil {
		delete(r.images, img.id)
		klog.FromContext(ctx).V(2).Info("Image removed", "imageID", img.id)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports the images' total size on a made-up image filesystem.
func (r *Runtime) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var used uint64
	for _, img := range r.images {
		used += img.size
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp:  r.clock.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMountpoint},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: uint64(len(r.images)) * 1000},
	}}}, nil
}
