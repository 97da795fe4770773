# On a machine with a GPU: the extension against a pure-torch reference (grid_sample with
# align_corners=False samples at the same pixel centres and pads with zeros). Without a GPU it
# says so and exits 0 after the import, which is all a GPU-less machine can prove.
import sys

import torch
import torch.nn.functional as F

import msda_ext


def reference(value, shapes, starts, locations, weights):
    batch, _, heads, channels = value.shape
    _, queries, _, levels, points, _ = locations.shape
    out = torch.zeros(batch, queries, heads, channels, dtype=value.dtype, device=value.device)
    for level in range(levels):
        h, w = (int(v) for v in shapes[level])
        start = int(starts[level])
        # (batch*heads, channels, h, w)
        m = value[:, start:start + h * w].permute(0, 2, 3, 1).reshape(batch * heads, channels, h, w)
        grid = locations[:, :, :, level].permute(0, 2, 1, 3, 4).reshape(batch * heads, queries, points, 2) * 2 - 1
        s = F.grid_sample(m, grid, mode='bilinear', padding_mode='zeros', align_corners=False)  # (b*h, c, q, p)
        wgt = weights[:, :, :, level].permute(0, 2, 1, 3).reshape(batch * heads, 1, queries, points)
        out += (s * wgt).sum(-1).reshape(batch, heads, channels, queries).permute(0, 3, 1, 2)
    return out.reshape(batch, queries, heads * channels)


if not torch.cuda.is_available():
    print('msda_ext imported from', msda_ext.__file__, '; no GPU here, so the kernel was not run')
    sys.exit(0)
torch.manual_seed(0)
shapes = torch.tensor([[16, 20], [8, 10], [4, 5]], dtype=torch.long, device='cuda')
starts = torch.cat([shapes.new_zeros(1), (shapes[:, 0] * shapes[:, 1]).cumsum(0)[:-1]])
keys = int((shapes[:, 0] * shapes[:, 1]).sum())
value = torch.rand(2, keys, 4, 8, device='cuda', dtype=torch.float64)
locations = torch.rand(2, 30, 4, 3, 4, 2, device='cuda', dtype=torch.float64) * 1.2 - 0.1
weights = torch.rand(2, 30, 4, 3, 4, device='cuda', dtype=torch.float64)
got = msda_ext.forward(value, shapes, starts, locations, weights)
want = reference(value, shapes, starts, locations, weights)
err = (got - want).abs().max().item()
print('msda_ext forward on', torch.cuda.get_device_name(), 'max abs error against grid_sample:', err)
sys.exit(0 if err < 1e-9 else 1)
