"""The layout of a chunk block of :func:`servo_ff.models.kernels.rollout_simd`: one float64 array holding, per element
of the chunk, its coefficients (filled once), state, this step's inputs and this step's outputs, each a row of
:data:`S` doubles. The offsets are compile-time constants, so the vectorised step sees one array and no aliasing.
"""

from __future__ import annotations

#: elements per chunk of ``rollout_simd`` (its rows stay in L1/L2) and the row stride of a chunk block: a
#: compile-time constant, padded by one cache line so the rows do not all map to the same cache set
SIMD_CHUNK = 512
S = SIMD_CHUNK + 8
LANES = 8  # a chunk is padded to whole vectors of this many doubles (AVX-512; a multiple of AVX2's 4)
#: rows of a chunk block: coefficients (filled once), state, this step's inputs, this step's outputs
(
    R_KPE,
    R_MAXPWM,
    R_VIN,
    R_UMAX,
    R_KT,
    R_R,
    R_INVR,
    R_KTR,
    R_KT2R,
    R_IMAX,
    R_VOLTAGE,
    R_EMF,
    R_SPAN,
    R_JDT,
    R_INVJ,
    R_GRAV,
    R_QOFF,
    R_VS,
    R_ALPHA,
    R_VMAX,
    R_KC,
    R_KV,
    R_KM,
    R_KE,
    R_KCS,
    R_KMS,
    R_KES,
    R_KMQ,
    R_KEQ,
    R_TH,
    R_DTH,
    R_GOAL,
    R_EXT,
    R_EN,
    R_TM,
    R_TF,
    R_VOLTS,
) = range(37)
N_ROWS = 37
