//! The CUDA field engine: device discovery, NVRTC compilation and kernel launches.
