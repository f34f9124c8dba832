"""XNNPACKQuantizer's annotations, read from the converted graph: which
tensors get quantize/dequantize pairs, with which parameters, and which
configuration applies where (set_global, set_module_type, set_module_name,
set_operator_type)."""

import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)

qd = torch.ops.quantized_decomposed
aten = torch.ops.aten


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU())
        self.gate = torch.nn.Linear(8, 6)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.max_pool2d(y, 2) * torch.sigmoid(y[:, :, ::2, ::2])
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.cat([self.head(y), torch.nn.functional.hardswish(self.gate(y))], 1)


INPUTS = (torch.randn(2, 3, 8, 8),)


def convert(quantizer):
    torch.manual_seed(0)
    graph = torch.export.export(Net().eval(), INPUTS).module()
    prepared = prepare_pt2e(graph, quantizer)
    prepared(*INPUTS)
    return convert_pt2e(prepared)


def calls(gm, target):
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target == target]


def producer(node, index=0):
    return node.args[index]


def is_dequantized(arg):
    return isinstance(arg, torch.fx.Node) and "dequantize" in str(arg.target)


def test_conv_bn_relu_is_one_quantized_unit():
    gm = convert(XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True)))
    (conv,) = calls(gm, aten.conv2d.default)
    assert is_dequantized(conv.args[0])
    assert producer(conv, 1).target == qd.dequantize_per_channel.default
    # Batch norm folded into the conv; nothing quantized between conv and relu.
    (relu,) = calls(gm, aten.relu.default)[:1]
    assert relu.args[0] is conv
    assert [u.target for u in relu.users] == [qd.quantize_per_tensor.default]


def test_fixed_and_shared_output_parameters():
    gm = convert(XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    (sigmoid,) = calls(gm, aten.sigmoid.default)
    (q,) = sigmoid.users
    assert q.args[1:3] == (1.0 / 256, -128)
    (pool,) = calls(gm, aten.max_pool2d.default)
    (pool_q,) = pool.users
    assert pool_q.args[1:3] == producer(pool).args[1:3]  # the input's parameters
    (cat,) = calls(gm, aten.cat.default)
    input_params = {tuple(a.args[1:3]) for a in cat.args[0]}
    (cat_q,) = cat.users
    assert input_params == {tuple(cat_q.args[1:3])}


def test_linear_relu_and_hardswish():
    gm = convert(XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    for linear in calls(gm, aten.linear.default):
        assert is_dequantized(linear.args[0]) and is_dequantized(linear.args[1])
        assert linear.args[2].op == "get_attr" or linear.args[2].op == "placeholder"
    (hardswish,) = calls(gm, aten.hardswish.default)
    assert is_dequantized(hardswish.args[0])
    assert [u.target for u in hardswish.users] == [qd.quantize_per_tensor.default]


def test_module_type_and_name_override_the_global_config():
    config = get_symmetric_quantization_config()
    gm = convert(XNNPACKQuantizer().set_global(config).set_module_type(torch.nn.Linear, None))
    assert not any(is_dequantized(l.args[1]) for l in calls(gm, aten.linear.default))
    assert is_dequantized(calls(gm, aten.conv2d.default)[0].args[1])

    gm = convert(XNNPACKQuantizer().set_module_name("head.0", config))
    head, gate = calls(gm, aten.linear.default)
    assert is_dequantized(head.args[1]) and not is_dequantized(gate.args[1])
    assert not is_dequantized(calls(gm, aten.conv2d.default)[0].args[0])

    gm = convert(XNNPACKQuantizer().set_global(config).set_operator_type(aten.conv2d.default, None))
    assert not is_dequantized(calls(gm, aten.conv2d.default)[0].args[1])
    assert all(is_dequantized(l.args[1]) for l in calls(gm, aten.linear.default))


def test_dynamic_config_quantizes_linear_activations_per_call():
    gm = convert(
        XNNPACKQuantizer().set_global(
            get_symmetric_quantization_config(is_per_channel=True, is_dynamic=True)
        )
    )
    assert not is_dequantized(calls(gm, aten.conv2d.default)[0].args[0])
    for linear in calls(gm, aten.linear.default):
        dq = linear.args[0]
        assert dq.target == qd.dequantize_per_tensor.tensor
        assert producer(dq).target == qd.quantize_per_tensor.tensor
    assert calls(gm, qd.choose_qparams.tensor)
    assert not any(u.target == qd.quantize_per_tensor.default for u in gm.graph.nodes)


def test_weight_range_arguments():
    gm = convert(
        XNNPACKQuantizer().set_global(
            get_symmetric_quantization_config(
                is_per_channel=True, weight_qmin=-8, weight_qmax=7, act_qmin=-127
            )
        )
    )
    weight = calls(gm, aten.conv2d.default)[0].args[1]
    assert weight.args[4:6] == (-8, 7)
    activation = calls(gm, aten.conv2d.default)[0].args[0]
    assert activation.args[3:5] == (-127, 127)
