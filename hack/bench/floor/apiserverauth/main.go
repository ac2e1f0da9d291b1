// Command apiserverauth is clientgo with the k8s.io/apiserver packages that pkg/server uses for
// the kubelet API's x509/TokenReview authentication and SubjectAccessReview authorization linked
// in: their package initialisation (CEL environments, API schemes, REST route tables) and the
// code it touches are resident in every process that links them (see package floor).
package main

import (
	// Linked for their cost only, as pkg/server links them.
	_ "k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	_ "k8s.io/apiserver/pkg/authorization/authorizerfactory"
	_ "k8s.io/apiserver/pkg/server/dynamiccertificates"

	"github.com/minikubelet/minikubelet/hack/bench/floor"
)

func main() { floor.Main() }
