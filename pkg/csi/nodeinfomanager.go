package csi

// The node info manager (upstream pkg/volume/csi/nodeinfomanager/nodeinfomanager.go): what a
// registered driver says about this node goes to the API — the Node's annotation
// csi.volume.kubernetes.io/nodeid (driver → node id), its topology labels, and the CSINode
// object's drivers[].

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// NodeIDAnnotation maps each registered driver to its node id, as JSON (upstream
// annotationKeyNodeID).
const NodeIDAnnotation = "csi.volume.kubernetes.io/nodeid"

// addNodeInfo records a driver: annotation and topology labels on the Node, then the CSINode
// entry (upstream InstallCSIDriver: updateNode, then updateCSINode).
func (m *Manager) addNodeInfo(ctx context.Context, name string, info nodeInfo) error {
	if err := m.updateNode(ctx, func(node *corev1.Node) {
		ids := nodeIDs(node)
		ids[name] = info.nodeID
		setNodeIDs(node, ids)
		for k, v := range info.topology {
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			node.Labels[k] = v
		}
	}); err != nil {
		return err
	}
	entry := storagev1.CSINodeDriver{Name: name, NodeID: info.nodeID}
	for k := range info.topology {
		entry.TopologyKeys = append(entry.TopologyKeys, k)
	}
	sort.Strings(entry.TopologyKeys)
	if info.maxVolumes > 0 {
		count := int32(info.maxVolumes)
		entry.Allocatable = &storagev1.VolumeNodeResources{Count: &count}
	}
	return m.updateCSINode(ctx, func(csiNode *storagev1.CSINode) {
		csiNode.Spec.Drivers = slices.DeleteFunc(csiNode.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == name })
		csiNode.Spec.Drivers = append(csiNode.Spec.Drivers, entry)
	})
}

// removeNodeInfo forgets a driver in the annotation and the CSINode (upstream
// UninstallCSIDriver; topology labels stay, as upstream leaves them).
func (m *Manager) removeNodeInfo(ctx context.Context, name string) error {
	if err := m.updateNode(ctx, func(node *corev1.Node) {
		ids := nodeIDs(node)
		delete(ids, name)
		setNodeIDs(node, ids)
	}); err != nil {
		return err
	}
	return m.updateCSINode(ctx, func(csiNode *storagev1.CSINode) {
		csiNode.Spec.Drivers = slices.DeleteFunc(csiNode.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == name })
	})
}

// nodeIDs is the annotation's map; a malformed one starts empty, as upstream overwrites it.
func nodeIDs(node *corev1.Node) map[string]string {
	ids := map[string]string{}
	if v, ok := node.Annotations[NodeIDAnnotation]; ok {
		_ = json.Unmarshal([]byte(v), &ids)
	}
	return ids
}

// setNodeIDs writes the map back; an empty map removes the annotation.
func setNodeIDs(node *corev1.Node, ids map[string]string) {
	if len(ids) == 0 {
		delete(node.Annotations, NodeIDAnnotation)
		return
	}
	b, _ := json.Marshal(ids) // a map of strings always marshals
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[NodeIDAnnotation] = string(b)
}

// updateNode reads, changes and writes the Node, again on a conflict.
func (m *Manager) updateNode(ctx context.Context, change func(*corev1.Node)) error {
	nodes := m.cfg.Client.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s: %w", m.cfg.NodeName, err)
		}
		change(node)
		_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

// updateCSINode reads (or creates, owned by the Node as upstream does), changes and writes this
// node's CSINode, again on a conflict.
func (m *Manager) updateCSINode(ctx context.Context, change func(*storagev1.CSINode)) error {
	csiNodes := m.cfg.Client.StorageV1().CSINodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		csiNode, err := csiNodes.Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			csiNode, err = m.createCSINode(ctx)
		}
		if err != nil {
			return err
		}
		change(csiNode)
		_, err = csiNodes.Update(ctx, csiNode, metav1.UpdateOptions{})
		return err
	})
}

// createCSINode makes the empty CSINode, owned by the Node so it goes with it (upstream
// CreateCSINode).
func (m *Manager) createCSINode(ctx context.Context) (*storagev1.CSINode, error) {
	node, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", m.cfg.NodeName, err)
	}
	csiNode := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: m.cfg.NodeName, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
		}}},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{}},
	}
	created, err := m.cfg.Client.StorageV1().CSINodes().Create(ctx, csiNode, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return m.cfg.Client.StorageV1().CSINodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	}
	return created, err
}

// ensureCSINode makes this node's CSINode at start, so the scheduler sees it before any driver
// registers (upstream InitializeCSINodeWithAnnotation).
func (m *Manager) ensureCSINode(ctx context.Context) error {
	_, err := m.cfg.Client.StorageV1().CSINodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = m.createCSINode(ctx)
	}
	return err
}
