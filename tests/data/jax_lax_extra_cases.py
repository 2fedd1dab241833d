"""The cases of tests/test_lax_extra.py (shared with make_jax_lax_extra_reference.py)."""
import numpy as np

CONV_CASES = [
 dict(xs=(2,3,7,6), ws=(4,3,3,2), kw=dict(window_strides=(1,1), padding="SAME")),
 dict(xs=(2,4,7,6), ws=(6,2,3,2), kw=dict(window_strides=(2,1), padding=((1,2),(-1,1)), lhs_dilation=(2,1), rhs_dilation=(1,2), feature_group_count=2)),
 dict(xs=(4,3,6,5), ws=(6,3,2,3), kw=dict(window_strides=(1,2), padding=((0,1),(2,0)), rhs_dilation=(2,1), batch_group_count=2)),
 dict(xs=(2,5,6,3), ws=(3,3,3,4), kw=dict(window_strides=(2,2), padding="VALID", dimension_numbers=("NHWC","HWIO","NHWC"))),
 dict(xs=(3,8,2), ws=(4,1,3), kw=dict(window_strides=(3,), padding=((2,3),), lhs_dilation=(3,), dimension_numbers=("NWC","OIW","NCW"), feature_group_count=2)),
 dict(xs=(6,2,3), ws=(3,2,6), kw=dict(window_strides=(1,), padding="SAME", rhs_dilation=(2,), dimension_numbers=("WCN","WIO","CWN"), batch_group_count=3)),
]

WINDOW_CASES = [("add",(2,5,6),(1,2,3),(1,2,1),((0,0),(1,0),(1,2)),None,None,0.0),
    ("max",(4,7),(2,3),(2,2),"SAME",None,None,-np.inf),
    ("min",(6,5),(3,2),(1,1),((1,1),(2,0)),(2,1),None,np.inf),
    ("mul",(5,4),(2,2),(1,2),"VALID",None,None,1.0),
    ("add",(3,8),(1,3),(1,2),"SAME",(1,1),(1,2),1.5),
    ("max",(2,6,6),(1,2,2),(1,2,2),"VALID",None,None,0.0)]
