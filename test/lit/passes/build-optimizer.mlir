// kiln-build-optimizer: @optimizer from @backward's gradients. Arguments per
// parameter P (in @backward's order): P, P.grad, its state (P.momentum; P.m,
// P.v), then the scalars kiln.lr and kiln.step; results P.next, then each
// state's .next. Every op is elementwise.

// RUN: kiln-opt %s -kiln-autodiff -kiln-partition -kiln-build-optimizer=kind=sgd | FileCheck %s --check-prefix=SGD
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition -kiln-build-optimizer | FileCheck %s --check-prefix=SGD
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition -kiln-build-optimizer="kind=sgd weight-decay=0.5" | FileCheck %s --check-prefix=SGDWD
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition -kiln-build-optimizer="kind=momentum momentum=0.5" | FileCheck %s --check-prefix=MOM
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition -kiln-build-optimizer=kind=adamw | FileCheck %s --check-prefix=ADAMW
// RUN: kiln-opt %s -kiln-autodiff -kiln-partition -kiln-build-optimizer="kind=adamw weight-decay=0.25" | FileCheck %s --check-prefix=ADAMWWD
// RUN: not kiln-opt %s -kiln-autodiff -kiln-partition -kiln-build-optimizer=kind=bogus 2>&1 | FileCheck %s --check-prefix=BOGUS
// RUN: not kiln-opt %s -kiln-build-optimizer 2>&1 | FileCheck %s --check-prefix=NOBACKWARD

// sgd: p' = p - lr g.
// SGD: func.func @backward(
// SGD-LABEL: func.func @optimizer(
// SGD-SAME: %[[W:[^:]+]]: tensor<3x5xf32> {kiln.name = "w"}, %[[GW:[^:]+]]: tensor<3x5xf32> {kiln.name = "w.grad"}, %[[B:[^:]+]]: tensor<5xf32> {kiln.name = "b"}, %[[GB:[^:]+]]: tensor<5xf32> {kiln.name = "b.grad"}, %[[LR:[^:]+]]: tensor<f32> {kiln.name = "kiln.lr"}, %[[STEP:[^:]+]]: tensor<f32> {kiln.name = "kiln.step"})
// SGD-SAME: -> (tensor<3x5xf32> {kiln.name = "w.next"}, tensor<5xf32> {kiln.name = "b.next"})
// SGD-SAME: attributes {kiln.graph, kiln.optimizer = "sgd"}
// SGD-NEXT: %[[D:.*]] = kiln.mul %[[LR]], %[[GW]] : (tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// SGD-NEXT: %[[WN:.*]] = kiln.sub %[[W]], %[[D]]
// SGD-NEXT: %[[E:.*]] = kiln.mul %[[LR]], %[[GB]] : (tensor<f32>, tensor<5xf32>) -> tensor<5xf32>
// SGD-NEXT: %[[BN:.*]] = kiln.sub %[[B]], %[[E]]
// SGD-NEXT: return %[[WN]], %[[BN]] : tensor<3x5xf32>, tensor<5xf32>

// sgd with weight decay (L2): p' = p - lr (g + wd p).
// SGDWD-LABEL: func.func @optimizer(
// SGDWD-NEXT: %[[WD:.*]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// SGDWD-NEXT: %[[P:.*]] = kiln.mul %[[WD]], %arg0
// SGDWD-NEXT: %[[G:.*]] = kiln.add %arg1, %[[P]]
// SGDWD-NEXT: %[[D:.*]] = kiln.mul %arg4, %[[G]]
// SGDWD-NEXT: kiln.sub %arg0, %[[D]]

// momentum (PyTorch's SGD): b' = mu b + g; p' = p - lr b'.
// MOM-LABEL: func.func @optimizer(
// MOM-SAME: %[[W:[^:]+]]: tensor<3x5xf32> {kiln.name = "w"}, %[[GW:[^:]+]]: tensor<3x5xf32> {kiln.name = "w.grad"}, %[[MW:[^:]+]]: tensor<3x5xf32> {kiln.name = "w.momentum"}, %{{[^:]+}}: tensor<5xf32> {kiln.name = "b"}, %{{[^:]+}}: tensor<5xf32> {kiln.name = "b.grad"}, %{{[^:]+}}: tensor<5xf32> {kiln.name = "b.momentum"}, %[[LR:[^:]+]]: tensor<f32> {kiln.name = "kiln.lr"}, %{{[^:]+}}: tensor<f32> {kiln.name = "kiln.step"})
// MOM-SAME: -> (tensor<3x5xf32> {kiln.name = "w.next"}, tensor<3x5xf32> {kiln.name = "w.momentum.next"}, tensor<5xf32> {kiln.name = "b.next"}, tensor<5xf32> {kiln.name = "b.momentum.next"})
// MOM-SAME: attributes {kiln.graph, kiln.optimizer = "momentum"}
// MOM-NEXT: %[[MU:.*]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// MOM-NEXT: %[[A:.*]] = kiln.mul %[[MU]], %[[MW]]
// MOM-NEXT: %[[BUF:.*]] = kiln.add %[[A]], %[[GW]]
// MOM-NEXT: %[[D:.*]] = kiln.mul %[[LR]], %[[BUF]]
// MOM-NEXT: %[[WN:.*]] = kiln.sub %[[W]], %[[D]]
// MOM: return %[[WN]], %[[BUF]], %{{.*}}, %{{.*}} : tensor<3x5xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>

// adamw: m' = b1 m + (1 - b1) g; v' = b2 v + (1 - b2) g^2;
// p' = p - lr (m' / (1 - b1^t)) / (sqrt(v' / (1 - b2^t)) + eps).
// ADAMW-LABEL: func.func @optimizer(
// ADAMW-SAME: %[[W:[^:]+]]: tensor<3x5xf32> {kiln.name = "w"}, %[[GW:[^:]+]]: tensor<3x5xf32> {kiln.name = "w.grad"}, %[[M:[^:]+]]: tensor<3x5xf32> {kiln.name = "w.m"}, %[[V:[^:]+]]: tensor<3x5xf32> {kiln.name = "w.v"}, %{{[^:]+}}: tensor<5xf32> {kiln.name = "b"}, %{{[^:]+}}: tensor<5xf32> {kiln.name = "b.grad"}, %{{[^:]+}}: tensor<5xf32> {kiln.name = "b.m"}, %{{[^:]+}}: tensor<5xf32> {kiln.name = "b.v"}, %[[LR:[^:]+]]: tensor<f32> {kiln.name = "kiln.lr"}, %[[T:[^:]+]]: tensor<f32> {kiln.name = "kiln.step"})
// ADAMW-SAME: -> (tensor<3x5xf32> {kiln.name = "w.next"}, tensor<3x5xf32> {kiln.name = "w.m.next"}, tensor<3x5xf32> {kiln.name = "w.v.next"}, tensor<5xf32> {kiln.name = "b.next"}, tensor<5xf32> {kiln.name = "b.m.next"}, tensor<5xf32> {kiln.name = "b.v.next"})
// ADAMW-SAME: attributes {kiln.graph, kiln.optimizer = "adamw"}
// Without weight decay p is not scaled first.
// ADAMW-NOT: kiln.mul %[[LR]], %{{.*}} : (tensor<f32>, tensor<f32>)
// ADAMW: %[[C1M:.*]] = kiln.constant dense<1.000000e-01> : tensor<f32>
// ADAMW-NEXT: %[[G1:.*]] = kiln.mul %[[C1M]], %[[GW]]
// ADAMW-NEXT: %[[B1:.*]] = kiln.constant dense<0.899999976> : tensor<f32>
// ADAMW-NEXT: %[[M1:.*]] = kiln.mul %[[B1]], %[[M]]
// ADAMW-NEXT: %[[MN:.*]] = kiln.add %[[M1]], %[[G1]]
// ADAMW-NEXT: %[[GG:.*]] = kiln.mul %[[GW]], %[[GW]]
// ADAMW-NEXT: %[[C2M:.*]] = kiln.constant dense<1.000000e-03> : tensor<f32>
// ADAMW-NEXT: %[[G2:.*]] = kiln.mul %[[C2M]], %[[GG]]
// ADAMW-NEXT: %[[B2:.*]] = kiln.constant dense<9.990000e-01> : tensor<f32>
// ADAMW-NEXT: %[[V1:.*]] = kiln.mul %[[B2]], %[[V]]
// ADAMW-NEXT: %[[VN:.*]] = kiln.add %[[V1]], %[[G2]]
// Bias corrections from the step: 1 - b1^t, 1 - b2^t.
// ADAMW: %[[P1:.*]] = kiln.pow %{{.*}}, %[[T]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// ADAMW: %[[BC1:.*]] = kiln.sub %{{.*}}, %[[P1]]
// ADAMW: %[[P2:.*]] = kiln.pow %{{.*}}, %[[T]]
// ADAMW: %[[BC2:.*]] = kiln.sub %{{.*}}, %[[P2]]
// ADAMW-NEXT: %[[EPS:.*]] = kiln.constant dense<9.99999993E-9> : tensor<f32>
// ADAMW-NEXT: %[[VH:.*]] = kiln.div %[[VN]], %[[BC2]]
// ADAMW-NEXT: %[[SQ:.*]] = kiln.sqrt %[[VH]]
// ADAMW-NEXT: %[[DEN:.*]] = kiln.add %[[SQ]], %[[EPS]]
// ADAMW-NEXT: %[[MH:.*]] = kiln.div %[[MN]], %[[BC1]]
// ADAMW-NEXT: %[[NUM:.*]] = kiln.mul %[[LR]], %[[MH]]
// ADAMW-NEXT: %[[UPD:.*]] = kiln.div %[[NUM]], %[[DEN]]
// ADAMW-NEXT: %[[WN:.*]] = kiln.sub %[[W]], %[[UPD]]
// ADAMW: return %[[WN]], %[[MN]], %[[VN]], %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>

// adamw's decoupled weight decay: p1 = p - (lr wd) p, the update from p1.
// ADAMWWD-LABEL: func.func @optimizer(
// ADAMWWD-NEXT: %[[WD:.*]] = kiln.constant dense<2.500000e-01> : tensor<f32>
// ADAMWWD-NEXT: %[[LW:.*]] = kiln.mul %arg8, %[[WD]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// ADAMWWD-NEXT: %[[D:.*]] = kiln.mul %[[LW]], %arg0
// ADAMWWD-NEXT: %[[P1:.*]] = kiln.sub %arg0, %[[D]]
// ADAMWWD: kiln.sub %[[P1]], %{{.*}} : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>

// BOGUS: error: unknown optimizer 'bogus' (known: sgd, momentum, adamw)
// NOBACKWARD: error: no @backward graph to build the optimizer from; run kiln-partition first
module {
  func.func @main(%x: tensor<4x3xf32> {kiln.name = "x"}, %w: tensor<3x5xf32> {kiln.name = "w", kiln.trainable}, %b: tensor<5xf32> {kiln.name = "b", kiln.trainable}) -> (tensor<f32> {kiln.name = "loss"}) attributes {kiln.graph} {
    %0 = kiln.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
    %1 = kiln.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
    %2 = kiln.tanh %1 : (tensor<4x5xf32>) -> tensor<4x5xf32>
    %3 = kiln.mul %2, %2 : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
    %axes = kiln.constant dense<[0, 1]> : tensor<2xi64>
    %4 = kiln.reduce_mean %3, %axes {keepdims = 0 : i64, noop_with_empty_axes = 0 : i64} : (tensor<4x5xf32>, tensor<2xi64>) -> tensor<f32>
    return %4 : tensor<f32>
  }
}
