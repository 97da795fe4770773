#pragma once
// docs/install.md laid out like BEVFormer's: lettered steps, one shell block each, an
// "(optional)" step, a commented-out alternative, mmdetection3d cloned and checked out at a tag.
namespace envlock::test {

inline const char* const bevformer_install_md = R"FIXTURE(# Installing the environment

These steps track the mmdetection3d setup guide.

**a. Make a conda env and enter it.**
```shell
conda create -n open-mmlab python=3.8 -y
conda activate open-mmlab
```

**b. PyTorch and torchvision.**
```shell
pip install torch==1.9.1+cu111 torchvision==0.10.1+cu111 torchaudio==0.9.1 -f https://download.pytorch.org/whl/torch_stable.html
# torch 1.9 or newer works
```

**c. A newer gcc inside the env (optional).**
```shell
conda install -c omgarcia gcc-6 # provides gcc 6.2
```

**d. mmcv-full.**
```shell
pip install mmcv-full==1.4.0
#  pip install mmcv-full==1.4.0 -f https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html
```

**e. mmdet and mmseg.**
```shell
pip install mmdet==2.14.0
pip install mmsegmentation==0.14.1
```

**f. mmdet3d, built from its repository.**
```shell
git clone https://github.com/open-mmlab/mmdetection3d.git
cd mmdetection3d
git checkout v0.17.1 # later tags were not tried
python setup.py install
```

**g. The remaining Python packages.**
```shell
pip install einops fvcore seaborn iopath==0.1.9 timm==0.6.13  typing-extensions==4.5.0 pylint ipython==8.12  numpy==1.19.5 matplotlib==3.5.2 numba==0.48.0 pandas==1.4.4 scikit-image==0.19.3 setuptools==59.5.0
python -m pip install 'git+https://github.com/facebookresearch/detectron2.git'
```

**h. Get this repository.**
```
git clone https://github.com/fundamentalvision/BEVFormer.git
```

**i. Pretrained weights.**
```shell
cd bevformer
mkdir ckpts
cd ckpts & wget https://github.com/zhiqi-li/storage/releases/download/v1.0/r101_dcn_fcos3d_pretrain.pth
```
)FIXTURE";

}  // namespace envlock::test
