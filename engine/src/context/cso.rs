//! CSO triplets: `create_*_state`, `bind_*_state`, `delete_*_state`
//! (context.rst "CSO State").

use std::sync::Arc;

use ferropipe_components::cso::BlendCso;
use ferropipe_components::state::BlendState;

use super::{BlendHandle, Context};
use crate::error::Result;

impl Context {
    /// `create_blend_state`.
    pub fn create_blend_state(&mut self, state: &BlendState) -> Result<BlendHandle> {
        Ok(self.spawn(BlendCso(Arc::new(state.clone()))))
    }

    /// `bind_blend_state`; `None` unbinds.
    pub fn bind_blend_state(&mut self, handle: Option<BlendHandle>) -> Result<()> {
        let state = match handle {
            Some(h) => Some(self.get("bind_blend_state", "handle", h)?.0.clone()),
            None => None,
        };
        self.bound_mut().blend = state;
        Ok(())
    }

    /// `delete_blend_state`.  A draw already recorded keeps its snapshot.
    pub fn delete_blend_state(&mut self, handle: BlendHandle) -> Result<()> {
        self.despawn("delete_blend_state", handle)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Error, Screen, ScreenConfig};
    use ferropipe_components::state::BlendState;

    #[test]
    fn deleted_and_foreign_handles_are_errors() {
        let screen = Screen::new(ScreenConfig {
            threads: 1,
            ..Default::default()
        })
        .unwrap();
        let mut a = screen.context_create().unwrap();
        let mut b = screen.context_create().unwrap();
        let h = a.create_blend_state(&BlendState::default()).unwrap();
        assert!(a.bind_blend_state(Some(h)).is_ok());
        assert!(matches!(
            b.bind_blend_state(Some(h)),
            Err(Error::InvalidHandle { .. })
        ));
        a.delete_blend_state(h).unwrap();
        assert!(matches!(
            a.bind_blend_state(Some(h)),
            Err(Error::InvalidHandle { .. })
        ));
        assert!(
            a.bound().blend.is_some(),
            "deleting a bound CSO keeps the binding's snapshot"
        );
    }
}
