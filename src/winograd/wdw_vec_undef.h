/* Undefine a vector layer of the Winograd template, so that one file can
 * instantiate the template twice (full and half width). */
#undef WDW_ISA
#undef WDW_R
#undef WDW_HALF
#undef VT
#undef V
#undef VZERO
#undef VSET1
#undef VLOAD
#undef VSTORE
#undef VADD
#undef VSUB
#undef VMUL
#undef VFMA
#undef VFNMA
#undef VMASKT
#undef VMASK
#undef VLOADMK
#undef VSPLIT
#undef VJOIN
#undef VJOINN
