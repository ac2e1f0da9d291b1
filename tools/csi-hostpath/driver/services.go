package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// GetInfo tells the kubelet what this plugin is and where its CSI socket is.
func (d *Driver) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: d.cfg.Name, Endpoint: d.cfg.Endpoint,
		SupportedVersions: []string{"1.0.0"}}, nil
}

// NotifyRegistrationStatus keeps the kubelet's answer.
func (d *Driver) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	d.mu.Lock()
	d.registered = s
	d.mu.Unlock()
	return &registerapi.RegistrationStatusResponse{}, nil
}

func (d *Driver) GetPluginInfo(context.Context, *csipb.GetPluginInfoRequest) (*csipb.GetPluginInfoResponse, error) {
	return &csipb.GetPluginInfoResponse{Name: d.cfg.Name, VendorVersion: "0.1.0"}, nil
}

func (d *Driver) GetPluginCapabilities(context.Context, *csipb.GetPluginCapabilitiesRequest) (*csipb.GetPluginCapabilitiesResponse, error) {
	return &csipb.GetPluginCapabilitiesResponse{}, nil
}

func (d *Driver) Probe(context.Context, *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	return &csipb.ProbeResponse{}, nil
}

func (d *Driver) NodeGetInfo(context.Context, *csipb.NodeGetInfoRequest) (*csipb.NodeGetInfoResponse, error) {
	return &csipb.NodeGetInfoResponse{NodeId: d.cfg.NodeID, AccessibleTopology: &csipb.Topology{
		Segments: map[string]string{"topology.hostpath.csi/node": d.cfg.NodeID}}}, nil
}

func (d *Driver) NodeGetCapabilities(context.Context, *csipb.NodeGetCapabilitiesRequest) (*csipb.NodeGetCapabilitiesResponse, error) {
	res := &csipb.NodeGetCapabilitiesResponse{}
	if d.cfg.Stage {
		res.Capabilities = append(res.Capabilities, &csipb.NodeServiceCapability{Type: &csipb.NodeServiceCapability_Rpc{
			Rpc: &csipb.NodeServiceCapability_RPC{Type: csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME}}})
	}
	return res, nil
}

// volumeDir is the volume's data directory; an id with a path separator is refused.
func (d *Driver) volumeDir(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", status.Errorf(codes.InvalidArgument, "volume id %q is not a plain name", id)
	}
	return filepath.Join(d.cfg.DataDir, id), nil
}

func (d *Driver) NodeStageVolume(_ context.Context, r *csipb.NodeStageVolumeRequest) (*csipb.NodeStageVolumeResponse, error) {
	dir, err := d.volumeDir(r.VolumeId)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	d.record("NodeStageVolume " + r.VolumeId + " " + r.StagingTargetPath)
	return &csipb.NodeStageVolumeResponse{}, nil
}

func (d *Driver) NodeUnstageVolume(_ context.Context, r *csipb.NodeUnstageVolumeRequest) (*csipb.NodeUnstageVolumeResponse, error) {
	d.record("NodeUnstageVolume " + r.VolumeId + " " + r.StagingTargetPath)
	return &csipb.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume links the target path to the volume's directory (made here for a driver
// that does not stage); publishing twice is no error.
func (d *Driver) NodePublishVolume(_ context.Context, r *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	dir, err := d.volumeDir(r.VolumeId)
	if err != nil {
		return nil, err
	}
	if r.TargetPath == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if cur, err := os.Readlink(r.TargetPath); err != nil || cur != dir {
		_ = os.Remove(r.TargetPath)
		if err := os.Symlink(dir, r.TargetPath); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	d.record("NodePublishVolume " + r.VolumeId + " " + r.TargetPath + " " + podName(r.VolumeContext))
	return &csipb.NodePublishVolumeResponse{}, nil
}

// podName is the pod name podInfoOnMount passed, or "-".
func podName(ctx map[string]string) string {
	if n, ok := ctx["csi.storage.k8s.io/pod.name"]; ok {
		return n
	}
	return "-"
}

// NodeUnpublishVolume removes the link; the data stays.
func (d *Driver) NodeUnpublishVolume(_ context.Context, r *csipb.NodeUnpublishVolumeRequest) (*csipb.NodeUnpublishVolumeResponse, error) {
	if err := os.Remove(r.TargetPath); err != nil && !os.IsNotExist(err) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	d.record("NodeUnpublishVolume " + r.VolumeId + " " + r.TargetPath)
	return &csipb.NodeUnpublishVolumeResponse{}, nil
}
