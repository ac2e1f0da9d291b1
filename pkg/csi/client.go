package csi

// The CSI node client (upstream pkg/volume/csi/csi_client.go): one gRPC connection per call to
// the driver's socket, as upstream dials per operation.

import (
	"context"
	"fmt"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// dial connects to a unix socket endpoint ("unix:///path" or a plain path). The connection is
// local to the node; gRPC's transport security does not apply to a unix socket.
func dial(endpoint string) (*grpc.ClientConn, error) {
	path := strings.TrimPrefix(endpoint, "unix://")
	if path == "" {
		return nil, fmt.Errorf("empty CSI endpoint")
	}
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", path, err)
	}
	return conn, nil
}

// withNode runs f with a Node client of the driver at endpoint and closes the connection.
func withNode(endpoint string, f func(csipb.NodeClient) error) error {
	conn, err := dial(endpoint)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return f(csipb.NewNodeClient(conn))
}

// nodeInfo is NodeGetInfo's answer: the driver's id for this node, how many volumes it may
// publish here (0: no limit) and its topology segments.
type nodeInfo struct {
	nodeID     string
	maxVolumes int64
	topology   map[string]string
}

// nodeGetInfo asks the driver who this node is (upstream csiDriverClient.NodeGetInfo).
func nodeGetInfo(ctx context.Context, endpoint string) (nodeInfo, error) {
	var info nodeInfo
	err := withNode(endpoint, func(c csipb.NodeClient) error {
		res, err := c.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
		if err != nil {
			return err
		}
		info = nodeInfo{nodeID: res.GetNodeId(), maxVolumes: res.GetMaxVolumesPerNode()}
		if t := res.GetAccessibleTopology(); t != nil {
			info.topology = t.GetSegments()
		}
		return nil
	})
	return info, err
}

// supportsStage reports whether the driver has the STAGE_UNSTAGE_VOLUME node capability
// (upstream csiDriverClient.NodeSupportsStageUnstage).
func supportsStage(ctx context.Context, endpoint string) (bool, error) {
	stage := false
	err := withNode(endpoint, func(c csipb.NodeClient) error {
		res, err := c.NodeGetCapabilities(ctx, &csipb.NodeGetCapabilitiesRequest{})
		if err != nil {
			return err
		}
		for _, capability := range res.GetCapabilities() {
			if capability.GetRpc().GetType() == csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME {
				stage = true
			}
		}
		return nil
	})
	return stage, err
}
