//! Local embedding models on the knowledge-base page: the catalogue with what is downloaded, in
//! use and suggested, downloads in the background (progress as [`AppEvent::KbModelProgress`],
//! kept here so a page opened later shows the bar), and the hub they come from.

use super::views::{KbModelProgress, KbModelView, KbModels};
use super::{App, AppError, AppEvent, lock};
use crate::rag::RagError;
use crate::rag::models::{self, DownloadProgress};

/// A download's last progress, and how to stop it.
pub(crate) struct Download {
    progress: KbModelProgress,
    cancel: tokio_util::sync::CancellationToken,
}

impl App {
    /// The models offered, and the hub they come from.
    pub fn kb_models(&self) -> Result<KbModels, AppError> {
        let kb = self.kb();
        let root = models::models_dir(&self.inner.dir);
        let listed = kb.models(&root, self.ui_language()? == "zh")?;
        let downloads = lock(&self.inner.model_downloads);
        let list = listed
            .into_iter()
            .map(|l| KbModelView {
                name: l.model.name.to_owned(),
                languages: l.model.languages.to_owned(),
                multilingual: l.model.multilingual,
                megabytes: l.model.megabytes,
                state: l.state,
                in_use: l.in_use,
                suggested: l.suggested,
                folder: l.folder.display().to_string(),
                download: downloads.get(l.model.name).map(|d| d.progress.clone()),
            })
            .collect();
        Ok(KbModels { hub: kb.model_hub()?, hub_setting: kb.settings()?.model_hub, models: list })
    }

    /// Starts downloading a model in the background (a running download of it is left alone).
    pub fn kb_get_model(&self, name: &str) -> Result<(), AppError> {
        let model = models::find(name)?;
        let hub = self.kb().model_hub()?;
        let cancel = self.inner.shutdown.child_token();
        {
            let mut downloads = lock(&self.inner.model_downloads);
            if let Some(running) = downloads.get(model.name).filter(|d| !d.progress.finished) {
                if running.cancel.is_cancelled() {
                    return Err(AppError::Invalid(format!(
                        "the download of {} is stopping; get it again in a moment",
                        model.name
                    )));
                }
                return Ok(());
            }
            let progress = KbModelProgress {
                model: model.name.to_owned(),
                file: String::new(),
                done_bytes: 0,
                total_bytes: 0,
                finished: false,
                error: None,
            };
            downloads.insert(model.name.to_owned(), Download { progress, cancel: cancel.clone() });
        }
        let root = models::models_dir(&self.inner.dir);
        let app = self.clone();
        let spawned = self.spawn(async move {
            let inner = &app.inner;
            let report = move |p: &DownloadProgress| {
                let progress = KbModelProgress {
                    model: p.model.clone(),
                    file: p.file.clone(),
                    done_bytes: p.done_bytes,
                    total_bytes: p.total_bytes,
                    finished: false,
                    error: None,
                };
                if let Some(d) = lock(&inner.model_downloads).get_mut(&p.model) {
                    d.progress = progress.clone();
                }
                inner.events.report(AppEvent::KbModelProgress(progress));
            };
            let download = models::download(&root, &hub, model, models::STALL_TIMEOUT, &report, &cancel);
            // A panic in the download must not leave the page waiting on it for ever.
            let result = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(download)).await;
            let error = match result {
                Ok(Ok(_) | Err(RagError::Cancelled)) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some("the download failed unexpectedly (see the log)".to_owned()),
            };
            let stopped = error.is_none() && cancel.is_cancelled();
            let mut downloads = lock(&app.inner.model_downloads);
            let ended = match error {
                // A download that worked, or was stopped, is not kept: the model's state says
                // whether it is here, or partly.
                None => downloads.remove(model.name).map(|d| d.progress),
                Some(error) => downloads.get_mut(model.name).map(|d| {
                    d.progress.error = Some(error);
                    d.progress.finished = true;
                    d.progress.clone()
                }),
            };
            drop(downloads);
            if let Some(mut progress) = ended {
                progress.finished = true;
                if stopped {
                    tracing::info!(model = model.name, "model download stopped");
                }
                app.inner.events.report(AppEvent::KbModelProgress(progress));
            }
        });
        if spawned.is_err() {
            lock(&self.inner.model_downloads).remove(model.name);
        }
        spawned
    }

    /// Stops a model's download; what arrived is kept for the next one.
    pub fn kb_cancel_model(&self, name: &str) -> Result<(), AppError> {
        let model = models::find(name)?;
        if let Some(d) = lock(&self.inner.model_downloads).get(model.name) {
            d.cancel.cancel();
        }
        Ok(())
    }

    /// Saves the hub models come from (`None`: back to the default); returns the list anew.
    pub fn kb_set_model_hub(&self, url: Option<&str>) -> Result<KbModels, AppError> {
        self.kb().set_model_hub(url.map(str::trim).filter(|u| !u.is_empty()))?;
        self.kb_models()
    }
}
