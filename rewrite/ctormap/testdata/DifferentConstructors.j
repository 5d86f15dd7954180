; Appendix B (Figure 7) of "Portable profiling of memory allocation in Java": depending on its
; argument the constructor invokes the alternate constructor or the superclass constructor.
; It verifies, and the constructor map must warn that it names no single constructor.
.class public DifferentConstructors
.super java/lang/Object

.method public <init>(Z)V
    .limit stack 1
    .limit locals 2
    aload_0
    iload_1
    ifeq Superclass
    invokespecial DifferentConstructors/<init>()V
    return
Superclass:
    invokespecial java/lang/Object/<init>()V
    return
.end method

.method public <init>()V
    .limit stack 1
    .limit locals 1
    aload_0
    invokespecial java/lang/Object/<init>()V
    return
.end method
